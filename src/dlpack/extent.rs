//! Which bytes a tensor's elements occupy, and whether two tensors may share one: the rule
//! `numpy.may_share_memory` answers, made exact for elements wider than the gaps between them.

use super::TensorView;

/// The memory a tensor's elements occupy, as addresses: what two tensors are compared by to
/// learn whether they may share a byte ([`may_overlap`](Self::may_overlap)).
///
/// Addresses are compared whatever the device: CUDA and ROCm give every device and the host one
/// unified address space, so equal addresses on two devices are treated as the same memory
/// (a conservative answer for devices without one).
///
/// ```
/// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
/// # #[cfg(feature = "alloc")] {
/// use dlpack_abi::dlpack::Export;
///
/// let tensor = Export::new(vec![0.0f64; 6], &[2, 3]).finish()?;
/// let extent = tensor.view().memory_extent();
/// assert_eq!(extent.end - extent.start, 48);
/// assert_eq!(extent.first, tensor.view().data_ptr() as usize);
/// assert_eq!((extent.stride_gcd, extent.element_bytes), (8, 8));
/// # }
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemoryExtent {
    /// The first byte any element occupies (an address).
    pub start: usize,
    /// One past the last byte any element occupies; `start == end` for an empty tensor.
    pub end: usize,
    /// The address of the first element (`data + byte_offset`).
    pub first: usize,
    /// The greatest common divisor of the byte strides of the dimensions with more than one
    /// index; 0 when every element lies at the first one's address.
    pub stride_gcd: usize,
    /// Bytes per element; 0 for packed sub-byte elements (then only the range is compared).
    pub element_bytes: usize,
}

impl MemoryExtent {
    /// Whether no byte is occupied (an empty tensor).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    ///
    /// let empty = Export::new(Vec::<f32>::new(), &[0, 3]).finish()?;
    /// assert!(empty.view().memory_extent().is_empty());
    /// # }
    /// # Ok(()) }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.start >= self.end
    }

    /// Whether the two tensors may share a byte. `false` is a proof: no byte is shared. `true`
    /// means they may (the ranges meet and the strides cannot rule it out), as NumPy's
    /// `may_share_memory` answers.
    ///
    /// Beyond the ranges, every byte of a tensor lies at `first + u` modulo `g`, the GCD of both
    /// tensors' byte strides, with `0 <= u < element_bytes`: interleaved tensors (`a[::2]` and
    /// `a[1::2]`, an image's colour channels) are told apart, and elements wider than the gap
    /// between two others are not.
    ///
    /// ```
    /// use dlpack_abi::dlpack::MemoryExtent;
    ///
    /// // `a[::2]` and `a[1::2]` of six float64 at 0x1000: interleaved, no byte in common.
    /// let even = MemoryExtent { start: 0x1000, end: 0x1028, first: 0x1000, stride_gcd: 16, element_bytes: 8 };
    /// let odd = MemoryExtent { start: 0x1008, end: 0x1030, first: 0x1008, ..even };
    /// assert!(!even.may_overlap(&odd));
    /// assert!(even.may_overlap(&even));
    /// // The same bytes read as 16-byte elements (complex128) meet both.
    /// let wide = MemoryExtent { element_bytes: 16, end: 0x1030, ..even };
    /// assert!(wide.may_overlap(&odd));
    /// ```
    pub fn may_overlap(&self, other: &Self) -> bool {
        if self.is_empty() || other.is_empty() || self.end <= other.start || other.end <= self.start
        {
            return false;
        }
        let (sa, sb) = (self.element_bytes, other.element_bytes);
        if sa == 0 || sb == 0 {
            return true; // packed bits: the ranges meet
        }
        let g = gcd(self.stride_gcd, other.stride_gcd);
        if g == 0 || sa.saturating_add(sb) > g {
            return true; // one element each, or no gap that both fit in
        }
        // Bytes of `self` have residues [a, a + sa) modulo g, those of `other` [b, b + sb): they
        // miss each other when `other`'s start lies at least `sa` past `self`'s and its end
        // wraps no further than `self`'s start.
        let (a, b) = (self.first % g, other.first % g);
        let distance = if b >= a { b - a } else { b + (g - a) };
        !(distance >= sa && g - distance >= sb)
    }
}

/// The greatest common divisor; `gcd(0, x) == x`.
fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl TensorView<'_> {
    /// The memory the elements occupy, for comparing tensors ([`MemoryExtent::may_overlap`]).
    ///
    /// ```
    /// # fn main() -> Result<(), dlpack_abi::dlpack::TensorError> {
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::Export;
    ///
    /// // Column 1 of a 2 x 3 row-major float32 matrix: 2 elements, 12 bytes apart.
    /// let column = Export::new(vec![0.0f32; 6], &[2]).first_element(1).strides(&[3]).finish()?;
    /// let extent = column.view().memory_extent();
    /// assert_eq!((extent.end - extent.start, extent.stride_gcd), (16, 12));
    /// # }
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn memory_extent(&self) -> MemoryExtent {
        // The common case, decided by what validation recorded: a non-empty row-major tensor of
        // whole-byte elements occupies its compact size from its first element, every element
        // one `element_bytes` step from the next. Agrees with the strided rule below (a property
        // test holds them together).
        if self.is_c_contiguous() && self.element_count() > 0 {
            if let Some(element_bytes) = self.element_bytes() {
                let first = self.data_ptr() as usize;
                if let Some(end) = first.checked_add(self.byte_size()) {
                    return MemoryExtent {
                        start: first,
                        end,
                        first,
                        stride_gcd: if self.element_count() > 1 {
                            element_bytes
                        } else {
                            0
                        },
                        element_bytes,
                    };
                }
            }
        }
        self.memory_extent_strided()
    }

    /// [`memory_extent`](Self::memory_extent) by the strides, for any validated tensor.
    pub(crate) fn memory_extent_strided(&self) -> MemoryExtent {
        let first = self.data_ptr() as usize;
        let data = self.raw().data as usize;
        let (low, high) = self.reach_from_data();
        // Validated at import: the reach lies in the address space counted from `data`.
        let address = |offset: i128| {
            usize::try_from(data as i128 + offset).unwrap_or(if offset < 0 {
                0
            } else {
                usize::MAX
            })
        };
        let mut element_bytes = self.element_bytes().unwrap_or(0);
        let mut stride_gcd = 0;
        if element_bytes != 0 {
            for (&extent, stride) in self.shape().iter().zip(self.strides().iter()) {
                if extent > 1 {
                    // |stride| * (extent - 1) * element_bytes fits in isize (validated reach);
                    // were it not, only the range would be compared.
                    let bytes = usize::try_from(stride.unsigned_abs())
                        .ok()
                        .and_then(|stride| stride.checked_mul(element_bytes));
                    let Some(bytes) = bytes else {
                        (element_bytes, stride_gcd) = (0, 0);
                        break;
                    };
                    stride_gcd = gcd(stride_gcd, bytes);
                }
            }
        }
        MemoryExtent {
            start: address(low),
            end: address(high),
            first,
            stride_gcd,
            element_bytes,
        }
    }
}

#[cfg(test)]
#[allow(unsafe_code)] // building a borrowed view of a test tensor
mod tests {
    use alloc::vec;
    use alloc::vec::Vec;

    use proptest::prelude::*;

    use crate::dlpack::TensorView;
    use crate::raw::{kDLCPU, kDLFloat, kDLInt, DLDataType, DLDevice, DLTensor};

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: if cfg!(miri) { 8 } else { 4000 },
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// The row-major fast path of `memory_extent` gives what the strided rule gives, for
        /// every tensor: strides absent, compact, compact but for extent-1 dimensions, or any;
        /// empty or not; whole-byte, multi-lane and packed sub-byte elements.
        #[test]
        fn memory_extent_fast_path_agrees_with_the_strided_rule(
            dims in prop::collection::vec((0i64..4, -5i64..6), 0..=4),
            (code, bits, lanes) in prop::sample::select(vec![
                (kDLInt, 8u8, 1u16), (kDLFloat, 32, 1), (kDLFloat, 64, 1), (kDLInt, 16, 4),
                (kDLInt, 4, 1), (kDLInt, 1, 1),
            ]),
            layout in 0u8..3,
            byte_offset in 0u64..64,
        ) {
            let mut shape: Vec<i64> = dims.iter().map(|&(extent, _)| extent).collect();
            let mut strides: Vec<i64> = match layout {
                // Compact row-major, with any stride on extent-1 dimensions (NumPy's rule).
                0 | 1 => {
                    let mut next = 1;
                    let mut strides = vec![0; shape.len()];
                    for (dim, &(extent, noise)) in dims.iter().enumerate().rev() {
                        strides[dim] = if layout == 1 && extent == 1 { noise } else { next };
                        next *= extent.max(1);
                    }
                    strides
                }
                _ => dims.iter().map(|&(_, stride)| stride).collect(),
            };
            let mut buffer = vec![0u8; 4096];
            let tensor = DLTensor {
                data: buffer.as_mut_ptr().wrapping_add(2048).cast(),
                device: DLDevice { device_type: kDLCPU, device_id: 0 },
                ndim: i32::try_from(shape.len()).unwrap(),
                dtype: DLDataType { code, bits, lanes },
                shape: shape.as_mut_ptr(),
                strides: if layout == 0 && byte_offset % 2 == 0 {
                    core::ptr::null_mut()
                } else {
                    strides.as_mut_ptr()
                },
                byte_offset,
            };
            // SAFETY: `shape` and `strides` hold `ndim` values and outlive the view.
            if let Ok(view) = unsafe { TensorView::from_raw(&tensor) } {
                prop_assert_eq!(view.memory_extent(), view.memory_extent_strided());
            }
        }
    }
}
