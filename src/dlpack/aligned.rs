//! [`AlignedVec`]: host elements in storage aligned to [`HOST_ALIGNMENT`] bytes, the one home of
//! the rule for every buffer this crate allocates for consumers.
#![allow(unsafe_code)]

use alloc::vec::Vec;
use core::marker::PhantomData;
use core::mem::size_of;

use super::{Element, HostBuffer, HostMemory};

/// The alignment, in bytes, of every [`AlignedVec`] (and of every buffer the Python glue
/// allocates): what JAX requires to import CPU memory without a copy (`copy=False`), a cache
/// line, and enough for every DLPack element type.
///
/// ```
/// assert_eq!(dlpack_abi::dlpack::HOST_ALIGNMENT, 64);
/// ```
pub const HOST_ALIGNMENT: usize = 64;

/// One aligned block of storage.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Block([u8; HOST_ALIGNMENT]);

// SAFETY: `repr(C)` over a byte array whose size equals its alignment (no padding); zero is a
// valid value.
unsafe impl bytemuck::Zeroable for Block {}
// SAFETY: as above: no padding, every bit pattern valid, `Copy` and `'static`.
unsafe impl bytemuck::Pod for Block {}

const ZERO: Block = Block([0; HOST_ALIGNMENT]);

/// A growable vector of elements whose first element is aligned to [`HOST_ALIGNMENT`] bytes:
/// what to export when a consumer wants aligned memory (JAX imports it with `copy=False`; a
/// `Vec<T>` is only aligned to `T`). It is a [`HostBuffer`], so [`Export`](super::Export) takes
/// it as it takes a `Vec`, and so is an `Arc<AlignedVec<T>>`, shared (read-only) as an
/// `Arc<[T]>` is.
///
/// ```
/// use dlpack_abi::dlpack::{AlignedVec, Export, HOST_ALIGNMENT};
///
/// let values: AlignedVec<f32> = (0..6).map(|i| i as f32).collect();
/// let tensor = Export::new(values, &[2, 3]).finish()?;
/// assert_eq!(tensor.view().data_ptr() as usize % HOST_ALIGNMENT, 0);
/// assert_eq!(tensor.view().get::<f32>(&[1, 2])?, 5.0);
/// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
/// ```
pub struct AlignedVec<T> {
    /// The storage: at least `len * size_of::<T>()` bytes.
    blocks: Vec<Block>,
    /// The number of elements.
    len: usize,
    elements: PhantomData<T>,
}

impl<T: Element> AlignedVec<T> {
    /// An empty vector (no allocation).
    ///
    /// ```
    /// let values = dlpack_abi::dlpack::AlignedVec::<u8>::new();
    /// assert!(values.is_empty());
    /// ```
    pub const fn new() -> Self {
        Self {
            blocks: Vec::new(),
            len: 0,
            elements: PhantomData,
        }
    }

    /// `len` zeroed elements, or `None` when the size overflows or the allocation fails.
    ///
    /// ```
    /// use dlpack_abi::dlpack::AlignedVec;
    ///
    /// let mut values = AlignedVec::<i64>::try_zeroed(4).expect("allocated");
    /// values[3] = 7;
    /// assert_eq!(values.as_slice(), [0, 0, 0, 7]);
    /// ```
    pub fn try_zeroed(len: usize) -> Option<Self> {
        let mut values = Self::new();
        values.grow_to(len)?;
        values.len = len;
        Some(values)
    }

    /// The number of elements.
    ///
    /// ```
    /// let values: dlpack_abi::dlpack::AlignedVec<u16> = [1, 2, 3].into_iter().collect();
    /// assert_eq!(values.len(), 3);
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    ///
    /// ```
    /// assert!(dlpack_abi::dlpack::AlignedVec::<f64>::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements.
    ///
    /// ```
    /// let values: dlpack_abi::dlpack::AlignedVec<u8> = (1..=3).collect();
    /// assert_eq!(values.as_slice(), [1, 2, 3]);
    /// ```
    pub fn as_slice(&self) -> &[T] {
        let bytes: &[u8] = bytemuck::cast_slice(&self.blocks);
        bytemuck::cast_slice(&bytes[..self.len * size_of::<T>()])
    }

    /// The elements, to write.
    ///
    /// ```
    /// let mut values: dlpack_abi::dlpack::AlignedVec<u8> = (1..=3).collect();
    /// values.as_mut_slice()[0] = 9;
    /// assert_eq!(values.as_slice(), [9, 2, 3]);
    /// ```
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.blocks);
        bytemuck::cast_slice_mut(&mut bytes[..self.len * size_of::<T>()])
    }

    /// Appends `value`.
    ///
    /// # Panics
    /// When the size overflows `usize` or the allocation fails, as `Vec::push` does.
    ///
    /// ```
    /// let mut values = dlpack_abi::dlpack::AlignedVec::<u32>::new();
    /// values.push(5);
    /// assert_eq!(values.as_slice(), [5]);
    /// ```
    pub fn push(&mut self, value: T) {
        let len = self.len + 1;
        if self.grow_to(len).is_none() {
            panic!("AlignedVec: cannot allocate {len} elements");
        }
        self.len = len;
        let last = self.len - 1;
        self.as_mut_slice()[last] = value;
    }

    /// Makes room for `len` elements (zeroed blocks, at least doubling), or `None` when the size
    /// overflows or the allocation fails.
    fn grow_to(&mut self, len: usize) -> Option<()> {
        let bytes = len.checked_mul(size_of::<T>())?;
        let blocks = bytes.div_ceil(HOST_ALIGNMENT);
        if blocks > self.blocks.len() {
            let target = blocks.max(self.blocks.len().saturating_mul(2));
            self.blocks
                .try_reserve_exact(target - self.blocks.len())
                .ok()?;
            self.blocks.resize(target, ZERO);
        }
        Some(())
    }
}

impl<T: Element> Default for AlignedVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Element> core::ops::Deref for AlignedVec<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Element> core::ops::DerefMut for AlignedVec<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: Element> FromIterator<T> for AlignedVec<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut values = Self::new();
        // A hint that cannot be allocated is only a hint: `push` reports a real failure.
        let _ = values.grow_to(iter.size_hint().0);
        for value in iter {
            values.push(value);
        }
        values
    }
}

impl<T: Element> From<&[T]> for AlignedVec<T> {
    fn from(values: &[T]) -> Self {
        values.iter().copied().collect()
    }
}

impl<T: Element> core::fmt::Debug for AlignedVec<T>
where
    T: core::fmt::Debug,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

// SAFETY: the elements are the vector's own allocation, never reallocated once the export owns
// it (nothing can push then), and aligned (64-byte blocks); the export is the only holder.
unsafe impl<T: Element + Send> HostBuffer for AlignedVec<T> {
    type Element = T;

    fn memory(&mut self) -> HostMemory<T> {
        let elements = self.as_mut_slice();
        HostMemory {
            start: elements.as_mut_ptr(),
            len: elements.len(),
            read_only: false,
        }
    }
}

// SAFETY: as for `Arc<[T]>`: a unique `Arc` (no other strong or weak holder) gives `&mut`, which
// may be written, and once owned by the export it cannot gain holders; a shared one is reported
// read-only, and its pointer is only read. The vector cannot grow behind an `Arc`.
unsafe impl<T: Element + Send + Sync> HostBuffer for alloc::sync::Arc<AlignedVec<T>> {
    type Element = T;

    fn memory(&mut self) -> HostMemory<T> {
        match alloc::sync::Arc::get_mut(self) {
            Some(unique) => unique.memory(),
            None => HostMemory {
                start: self.as_slice().as_ptr().cast_mut(),
                len: self.len(),
                read_only: true,
            },
        }
    }
}
