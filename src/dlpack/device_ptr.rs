//! Typed device addresses: the first element of a tensor as an address for device code
//! (kernels), checked as typed access is, except for host access.

use core::mem::align_of;

use super::element::assert_size_matches;
use super::validate::KNOWN_FLAGS;
use super::{AccessError, Element, TensorView};

impl TensorView<'_> {
    /// The first element (`data + byte_offset`) as a device address of `T`s, for kernels and
    /// device runtimes (a `CUdeviceptr`, for one): every check of [`typed_ptr`](Self::typed_ptr)
    /// except host access. The device's `data` must be an address
    /// ([`DLDeviceType::is_addressable`](crate::raw::DLDeviceType::is_addressable): CPU,
    /// CUDA, ROCm, oneAPI and their host and managed kinds), the flags known, the dtype `T`'s,
    /// and the address aligned for `T` (unless the tensor is empty). The host may dereference it
    /// only where [`typed_ptr`](Self::typed_ptr) would have given it.
    ///
    /// # Errors
    /// [`AccessError::NotAddressable`], [`AccessError::UnknownFlags`],
    /// [`AccessError::DtypeMismatch`] or [`AccessError::Misaligned`].
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{AccessError, Element, TensorDescription, TensorOwner, VersionedTensor};
    /// use dlpack_abi::raw::{kDLCUDA, DLDevice};
    ///
    /// /// Stands for 256 floats at device address 0x7000_0000 on GPU 0.
    /// struct Gpu([i64; 1]);
    /// // SAFETY: stands for a real device allocation of 1024 bytes.
    /// unsafe impl TensorOwner for Gpu {
    ///     fn describe(&mut self) -> TensorDescription<'_> {
    ///         let gpu = DLDevice { device_type: kDLCUDA, device_id: 0 };
    ///         let data = core::ptr::null_mut::<u8>().wrapping_add(0x7000_0000).cast();
    ///         TensorDescription::new(data, 1024, gpu, f32::DTYPE, &self.0)
    ///     }
    /// }
    /// let tensor = VersionedTensor::from_owner(Gpu([256]))?;
    /// let view = tensor.view();
    /// assert_eq!(view.device_ptr::<f32>()? as usize, 0x7000_0000);
    /// assert!(matches!(view.typed_ptr::<f32>(), Err(AccessError::NotHostAccessible { .. })));
    /// assert!(matches!(view.device_ptr::<i32>(), Err(AccessError::DtypeMismatch { .. })));
    /// # }
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn device_ptr<T: Element>(&self) -> Result<*const T, AccessError> {
        assert_size_matches::<T>();
        let device = self.device();
        if !device.device_type.is_addressable() {
            return Err(AccessError::NotAddressable { device });
        }
        let flags = self.flags();
        if !KNOWN_FLAGS.contains(flags) {
            return Err(AccessError::UnknownFlags { flags });
        }
        self.check_dtype::<T>()?;
        let start = self.data_ptr().cast::<T>().cast_const();
        let address = start as usize;
        if self.element_count() > 0 && address % align_of::<T>() != 0 {
            return Err(AccessError::Misaligned {
                address,
                align: align_of::<T>(),
            });
        }
        Ok(start)
    }
}

impl super::VersionedTensor {
    /// The first element as a device address of `T`s that device code may write, for a tensor
    /// this consumer holds alone (as for [`as_mut_slice`](Self::as_mut_slice): `IS_COPIED`, or
    /// an exclusive export), after the checks of [`TensorView::device_ptr`].
    ///
    /// # Errors
    /// [`AccessError::ReadOnly`] or [`AccessError::NotExclusive`], and those of
    /// [`TensorView::device_ptr`].
    ///
    /// ```
    /// # #[cfg(feature = "alloc")] {
    /// use dlpack_abi::dlpack::{AccessError, Export};
    ///
    /// let mut mine = Export::new(vec![1.0f32, 2.0], &[2]).finish()?;
    /// assert_eq!(mine.device_mut_ptr::<f32>()?.cast_const(), mine.view().device_ptr::<f32>()?);
    /// let values = std::sync::Arc::<[f32]>::from([1.0]);
    /// let mut shared = Export::new(std::sync::Arc::clone(&values), &[1]).finish()?;
    /// assert_eq!(shared.device_mut_ptr::<f32>(), Err(AccessError::ReadOnly));
    /// # }
    /// # Ok::<(), dlpack_abi::dlpack::TensorError>(())
    /// ```
    pub fn device_mut_ptr<T: Element>(&mut self) -> Result<*mut T, AccessError> {
        self.check_exclusive()?;
        Ok(self.view().device_ptr::<T>()?.cast_mut())
    }
}
