//! The zero-copy bridge between DLPack and Arrow: [`DeviceArray::from_tensor`] and
//! [`DeviceArray::into_tensor`]. Each side keeps the other's owner alive: the Arrow array's
//! `release` runs the DLPack deleter, and the DLPack deleter releases the Arrow array.
#![allow(unsafe_code)]

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::ffi::c_void;
use core::ptr;

use super::{
    arrow_device, dlpack_device, Array, ArrayParts, ArrayView, BridgeError, DataType, DeviceArray,
};
use super::{Excerpt, SchemaDef, SchemaRef, BOOL8, EXTENSION_METADATA_KEY, EXTENSION_NAME_KEY};
use crate::dlpack::{
    element_size, row_major_stride, ManagedStruct, ManagedTensor, TensorDescription, TensorOwner,
    VersionedTensor,
};
use crate::raw::{DLDataType, DLDevice, DLPackFlags};

/// `kDLBool`, one byte per value: Arrow's `arrow.bool8`.
const BOOL_BYTE: DLDataType = <crate::dlpack::Bool8 as crate::dlpack::Element>::DTYPE;

/// The Arrow field storing DLPack elements of `dtype`.
fn value_field(dtype: DLDataType) -> Result<SchemaDef, BridgeError> {
    if dtype == BOOL_BYTE {
        // The empty metadata Arrow C++ writes, and arrow-rs's `Bool8` requires.
        return Ok(SchemaDef::new("c")?
            .with_metadata(EXTENSION_NAME_KEY, BOOL8)
            .with_metadata(EXTENSION_METADATA_KEY, ""));
    }
    let format = DataType::format_of_dtype(dtype).ok_or(BridgeError::UnsupportedDtype { dtype })?;
    Ok(SchemaDef::new(format)?)
}

/// The DLPack element type of an Arrow field (primitive, or `arrow.bool8`).
fn element_type(schema: SchemaRef<'_>) -> Result<DLDataType, BridgeError> {
    if schema.extension_name() == Some(BOOL8) && schema.data_type() == DataType::Int8 {
        return Ok(BOOL_BYTE);
    }
    schema
        .data_type()
        .dlpack_dtype()
        .ok_or(BridgeError::UnsupportedType {
            format: Excerpt::of(schema.format()),
        })
}

impl DeviceArray {
    /// A DLPack tensor as an Arrow array on the same device, without copying.
    ///
    /// A 1-D tensor becomes a primitive array; an N-D tensor becomes an
    /// `arrow.fixed_shape_tensor` array of `shape[0]` cells of shape `shape[1..]`. The tensor
    /// must be compact row-major with a primitive integer or float type (or `kDLBool`, as
    /// `arrow.bool8`); the Arrow array has no nulls and offset 0, and its buffer is
    /// `data + byte_offset`. CPU arrays get `device_id` -1.
    ///
    /// The tensor moves into the array: its deleter runs when the array is released. On error
    /// the tensor has been dropped (its deleter run once) when this returns.
    ///
    /// # Errors
    /// [`BridgeError`] for a tensor Arrow cannot describe: not compact row-major, a dtype without an
    /// Arrow primitive, a device Arrow has no type for, or a shape that overflows. The tensor's
    /// deleter has run then.
    ///
    /// ```
    /// use dlpack_abi::arrow::DeviceArray;
    /// use dlpack_abi::dlpack::Export;
    ///
    /// let tensor = Export::new(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).finish()?;
    /// let address = tensor.view().data_ptr();
    /// let (schema, array) = DeviceArray::from_tensor(tensor)?;
    /// let schema = schema.export()?;
    /// assert_eq!(schema.view().fixed_shape_tensor().unwrap().shape(), &[3]);
    /// let view = array.view(schema.view())?;
    /// assert_eq!(view.len(), 2);
    /// assert_eq!(view.child(0).unwrap().values::<f32>()?.as_ptr().cast(), address);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_tensor<M: ManagedStruct + 'static>(
        tensor: ManagedTensor<M>,
    ) -> Result<(SchemaDef, DeviceArray), BridgeError> {
        let view = tensor.view();
        let shape = view.shape();
        let Some(&length) = shape.first() else {
            return Err(BridgeError::ZeroDims);
        };
        let value = value_field(view.dtype())?;
        if !view.is_c_contiguous() {
            return Err(BridgeError::NotContiguous);
        }
        let device = view.device();
        let (device_type, device_id) = arrow_device(device)?;
        let byte_offset = view.raw().byte_offset;
        if byte_offset != 0 && !device.device_type.is_addressable() {
            return Err(BridgeError::OffsetNotRepresentable {
                offset: i64::try_from(byte_offset).unwrap_or(i64::MAX),
            });
        }
        let data = view.data_ptr().cast_const();
        let values = ArrayParts::new(view.element_count(), alloc::vec![ptr::null(), data]);
        let cells = match shape.len() {
            1 => None,
            _ => Some(SchemaDef::fixed_shape_tensor(value.clone(), &shape[1..])?),
        };
        // Validated: `>= 0`.
        let length = usize::try_from(length).unwrap_or(0);
        // Every node holds the tensor: the C Data Interface lets a consumer move a child out
        // and release its parent, and the child's values must outlive that.
        let tensor = Arc::new(tensor);
        // SAFETY: the element count of compact values of the field's type at `data`, on
        // `device`, kept alive by the tensor (the owner) until this node is released.
        let values = unsafe { Array::from_parts(values, Arc::clone(&tensor)) };
        let (schema, array) = match cells {
            None => (value, values),
            Some(schema) => {
                let parts = ArrayParts::new(length, alloc::vec![ptr::null()]).with_child(values);
                // SAFETY: no validity, no nulls; the child holds `length * product(shape[1..])`
                // values (the element count) and keeps them alive on its own.
                (schema, unsafe { Array::from_parts(parts, tensor) })
            }
        };
        let array = array.bound_to(schema.clone());
        // SAFETY: the buffers are on the tensor's device (DLPack); no event to wait on.
        Ok((schema, unsafe {
            DeviceArray::new(array, device_type, device_id, ptr::null_mut())
        }))
    }

    /// This array as a read-only DLPack tensor on the same device, without copying.
    ///
    /// Bridges a primitive integer or float array (or `arrow.bool8`) to a 1-D tensor, and an
    /// `arrow.fixed_shape_tensor` array to an N-D tensor whose first dimension is the array's
    /// length (a `permutation` becomes strides). The array must have no nulls (a `null_count`
    /// of -1 with a bitmap is counted on host memory) and no pending `sync_event` (none, waited
    /// on with [`wait_host`](Self::wait_host), or, for device memory the host cannot read, by
    /// a stream with [`wait_stream`](Self::wait_stream): the tensor is then ready on that
    /// stream only); its offset
    /// becomes `byte_offset`. `READ_ONLY` is set: Arrow data is immutable.
    ///
    /// The array moves into the tensor: it is released when the deleter runs. On error it has
    /// been released (once) when this returns.
    ///
    /// # Errors
    /// [`BridgeError::PendingEvent`] while a `sync_event` is pending, and the other
    /// [`BridgeError`]s for what DLPack cannot describe (nulls, a type without a DLPack dtype, a
    /// device type or id out of range).
    ///
    /// ```
    /// use dlpack_abi::arrow::{Array, BridgeError, DeviceArray, SchemaDef};
    ///
    /// let schema = SchemaDef::new("g")?.export()?;
    /// let array = DeviceArray::from_cpu(Array::from_vec(vec![0.5f64, 1.5])?);
    /// let tensor = array.into_tensor(schema.view())?;
    /// assert_eq!(tensor.view().shape(), [2]);
    /// assert!(tensor.view().flags().contains(dlpack_abi::raw::DLPackFlags::READ_ONLY));
    /// assert_eq!(tensor.view().as_slice::<f64>()?, [0.5, 1.5]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_tensor(self, schema: SchemaRef<'_>) -> Result<VersionedTensor, BridgeError> {
        if !self.ready_for_device_use() {
            return Err(BridgeError::PendingEvent);
        }
        let device = dlpack_device(self.device_type(), self.device_id())?;
        let view = self.view(schema)?;
        let described = match schema.fixed_shape_tensor() {
            Some(cell) => {
                no_nulls(view)?;
                let list_size = cell.list_size().unwrap_or(0);
                let values = view.child(0).ok_or(BridgeError::UnsupportedType {
                    format: Excerpt::of(schema.format()),
                })?;
                let mut described = Described::values(values, device)?;
                let first = view.offset() as u128 * list_size as u128 + values.offset() as u128;
                described.at(first)?;
                let mut strides = Vec::with_capacity(cell.ndim() + 1);
                strides.push(i64::try_from(list_size).unwrap_or(i64::MAX));
                let physical = cell.shape();
                strides
                    .extend((0..cell.ndim()).map(|i| row_major_stride(physical, cell.physical(i))));
                described.shape = core::iter::once(i64::try_from(view.len()).unwrap_or(i64::MAX))
                    .chain(cell.logical_shape())
                    .collect();
                described.strides = Some(strides);
                described
            }
            None => {
                let mut described = Described::values(view, device)?;
                described.at(view.offset() as u128)?;
                described
            }
        };
        let owner = Bridged {
            _array: self,
            described,
        };
        Ok(VersionedTensor::from_owner(owner)?)
    }
}

/// Refuses arrays with nulls (counting the bitmap when the count is unknown).
fn no_nulls(view: ArrayView<'_>) -> Result<(), BridgeError> {
    match view.raw().null_count {
        0 => Ok(()),
        -1 => match view.validity() {
            Ok(None) => Ok(()),
            Ok(Some(bitmap)) if bitmap.count_ones() == bitmap.len() => Ok(()),
            _ => Err(BridgeError::NullsPresent { null_count: -1 }),
        },
        null_count => Err(BridgeError::NullsPresent { null_count }),
    }
}

/// What the tensor will say about the Arrow memory.
struct Described {
    /// The values buffer.
    data: *mut c_void,
    /// The values buffer's length in bytes: `offset + length` values (C Data Interface).
    len: usize,
    byte_offset: u64,
    device: DLDevice,
    dtype: DLDataType,
    shape: Vec<i64>,
    strides: Option<Vec<i64>>,
}

impl Described {
    /// A 1-D description of a primitive (or bool8) array's values, before its offset.
    fn values(values: ArrayView<'_>, device: DLDevice) -> Result<Self, BridgeError> {
        if values.schema().dictionary().is_some() {
            return Err(BridgeError::DictionaryEncoded);
        }
        let dtype = element_type(values.schema())?;
        no_nulls(values)?;
        // Validated: `offset + length` values fit in `isize` bytes.
        let size = element_size(dtype).unwrap_or(1);
        Ok(Self {
            data: values.buffer(1).unwrap_or(ptr::null()).cast_mut(),
            len: (values.offset() + values.len()) * size,
            byte_offset: 0,
            device,
            dtype,
            shape: alloc::vec![i64::try_from(values.len()).unwrap_or(i64::MAX)],
            strides: None,
        })
    }

    /// Starts the tensor `first` values into the buffer, checking that the first value is
    /// aligned on devices whose buffers are addresses (the one rule: `is_addressable`): as this
    /// target aligns the element type in host memory (what typed access checks), naturally on
    /// other devices (what their kernels assume).
    fn at(&mut self, first: u128) -> Result<(), BridgeError> {
        let size = element_size(self.dtype).unwrap_or(1);
        let bytes = first * size as u128;
        self.byte_offset = u64::try_from(bytes)
            .ok()
            .filter(|&b| b <= isize::MAX as u64)
            .ok_or(BridgeError::OffsetNotRepresentable {
                offset: i64::try_from(first).unwrap_or(i64::MAX),
            })?;
        let device_type = self.device.device_type;
        let align = match size {
            _ if !device_type.is_host_accessible() => size,
            2 => core::mem::align_of::<u16>(),
            4 => core::mem::align_of::<u32>(),
            8 => core::mem::align_of::<u64>(),
            _ => 1,
        };
        let start = self.data as usize as u128 + bytes;
        if device_type.is_addressable() && !self.data.is_null() && start % align as u128 != 0 {
            return Err(BridgeError::Misaligned);
        }
        Ok(())
    }
}

/// The owner of a bridged tensor: the Arrow array, released when the deleter runs.
struct Bridged {
    /// Kept for its drop: released when the deleter drops the owner.
    _array: DeviceArray,
    described: Described,
}

// SAFETY: `data` points into the array's immutable buffers, which may be read from any thread;
// the array itself is `Send`.
unsafe impl Send for Bridged {}

// SAFETY: `data` and `len` are the array's values buffer (`offset + length` values, as the C
// Data Interface sizes it), which the array keeps alive (and unchanged: Arrow buffers are
// immutable) until it is released, i.e. until this owner is dropped by the deleter; `READ_ONLY`
// is set, so the consumer never writes. Everything else, the reach included, is checked.
unsafe impl TensorOwner for Bridged {
    fn describe(&mut self) -> TensorDescription<'_> {
        let d = &self.described;
        let mut description = TensorDescription::new(d.data, d.len, d.device, d.dtype, &d.shape)
            .with_byte_offset(d.byte_offset)
            .with_flags(DLPackFlags::READ_ONLY);
        if let Some(strides) = &d.strides {
            description = description.with_strides(strides);
        }
        description
    }
}
