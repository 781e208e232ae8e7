//! A test producer of Arrow structs: memory the test allocates, `release` callbacks that free it
//! and count their calls, and children released only by their parent, as the spec says.
#![allow(dead_code)]

use std::ffi::{c_void, CString};
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use dlpack_abi::raw::*;

/// Release calls of one struct (shared with its private data).
pub type Counter = Arc<AtomicUsize>;

pub fn counter() -> Counter {
    Arc::new(AtomicUsize::new(0))
}

pub fn count(counter: &Counter) -> usize {
    counter.load(Ordering::SeqCst)
}

/// The metadata encoding of `pairs`.
pub fn metadata(pairs: &[(&str, &[u8])]) -> Vec<u8> {
    let mut bytes = (pairs.len() as i32).to_ne_bytes().to_vec();
    for (key, value) in pairs {
        bytes.extend((key.len() as i32).to_ne_bytes());
        bytes.extend(key.as_bytes());
        bytes.extend((value.len() as i32).to_ne_bytes());
        bytes.extend(*value);
    }
    bytes
}

struct SchemaPrivate {
    _strings: Vec<CString>,
    _metadata: Option<Vec<u8>>,
    children: Vec<*mut ArrowSchema>,
    dictionary: *mut ArrowSchema,
    counter: Counter,
}

unsafe extern "C" fn release_schema(schema: *mut ArrowSchema) {
    // SAFETY: called with a base struct this fixture made (possibly moved).
    let schema = unsafe { &mut *schema };
    // SAFETY: `private_data` is the fixture's box.
    let private = unsafe { Box::from_raw(schema.private_data.cast::<SchemaPrivate>()) };
    let dictionary = (!private.dictionary.is_null()).then_some(private.dictionary);
    for &child in private.children.iter().chain(dictionary.iter()) {
        // SAFETY: boxes this fixture made; released ones (moved out) are skipped.
        let mut child = unsafe { Box::from_raw(child) };
        if let Some(release) = child.release {
            // SAFETY: the parent releases its children.
            unsafe { release(&mut *child) };
        }
    }
    private.counter.fetch_add(1, Ordering::SeqCst);
    schema.release = None;
}

/// A foreign schema: `format` and `name` as raw bytes (NUL appended), optional metadata bytes.
pub fn schema(
    format: &[u8],
    name: Option<&[u8]>,
    metadata: Option<Vec<u8>>,
    children: Vec<ArrowSchema>,
    counter: &Counter,
) -> ArrowSchema {
    let mut strings = vec![CString::new(format).unwrap()];
    strings.extend(name.map(|n| CString::new(n).unwrap()));
    let children: Vec<_> = children
        .into_iter()
        .map(|c| Box::into_raw(Box::new(c)))
        .collect();
    let mut private = Box::new(SchemaPrivate {
        _strings: strings,
        _metadata: metadata,
        children,
        dictionary: ptr::null_mut(),
        counter: counter.clone(),
    });
    ArrowSchema {
        format: private._strings[0].as_ptr(),
        name: private._strings.get(1).map_or(ptr::null(), |n| n.as_ptr()),
        metadata: private
            ._metadata
            .as_ref()
            .map_or(ptr::null(), |m| m.as_ptr().cast()),
        flags: 0,
        n_children: private.children.len() as i64,
        children: if private.children.is_empty() {
            ptr::null_mut()
        } else {
            private.children.as_mut_ptr()
        },
        dictionary: ptr::null_mut(),
        release: Some(release_schema),
        private_data: Box::into_raw(private).cast(),
    }
}

/// Makes `schema` (built by [`schema`]) dictionary-encoded, its parent releasing `dictionary`.
pub fn with_dictionary(schema: ArrowSchema, dictionary: ArrowSchema) -> ArrowSchema {
    let dictionary = Box::into_raw(Box::new(dictionary));
    // SAFETY: `private_data` is this fixture's box.
    unsafe { (*schema.private_data.cast::<SchemaPrivate>()).dictionary = dictionary };
    ArrowSchema {
        dictionary,
        ..schema
    }
}

/// Gives `array` (built by [`array`]) a dictionary, its parent releasing it.
pub fn with_array_dictionary(array: ArrowArray, dictionary: ArrowArray) -> ArrowArray {
    let dictionary = Box::into_raw(Box::new(dictionary));
    // SAFETY: `private_data` is this fixture's box.
    unsafe { (*array.private_data.cast::<ArrayPrivate>()).dictionary = dictionary };
    ArrowArray {
        dictionary,
        ..array
    }
}

/// A leaf schema of `format` with its own counter.
pub fn leaf(format: &str) -> ArrowSchema {
    schema(format.as_bytes(), None, None, Vec::new(), &counter())
}

struct ArrayPrivate {
    /// u64 words: aligned for every primitive.
    _data: Vec<Vec<u64>>,
    buffers: Vec<*const c_void>,
    children: Vec<*mut ArrowArray>,
    dictionary: *mut ArrowArray,
    counter: Counter,
}

unsafe extern "C" fn release_array(array: *mut ArrowArray) {
    // SAFETY: called with a base struct this fixture made (possibly moved).
    let array = unsafe { &mut *array };
    // SAFETY: `private_data` is the fixture's box.
    let private = unsafe { Box::from_raw(array.private_data.cast::<ArrayPrivate>()) };
    let dictionary = (!private.dictionary.is_null()).then_some(private.dictionary);
    for &child in private.children.iter().chain(dictionary.iter()) {
        // SAFETY: boxes this fixture made; released ones (moved out) are skipped.
        let mut child = unsafe { Box::from_raw(child) };
        if let Some(release) = child.release {
            // SAFETY: the parent releases its children.
            unsafe { release(&mut *child) };
        }
    }
    private.counter.fetch_add(1, Ordering::SeqCst);
    array.release = None;
}

/// A buffer for [`array`]: bytes copied into u64 words; `None` is a NULL buffer.
pub type Buffer = Option<Vec<u8>>;

/// Native-endian bytes of `values`.
pub fn bytes_of<T: bytemuck::Pod>(values: &[T]) -> Buffer {
    Some(bytemuck::cast_slice(values).to_vec())
}

/// A foreign array.
pub fn array(
    length: i64,
    null_count: i64,
    offset: i64,
    buffers: Vec<Buffer>,
    children: Vec<ArrowArray>,
    counter: &Counter,
) -> ArrowArray {
    let data: Vec<Vec<u64>> = buffers
        .iter()
        .map(|b| {
            let b = b.as_deref().unwrap_or(&[]);
            let mut words = vec![0u64; b.len().div_ceil(8)];
            bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..b.len()].copy_from_slice(b);
            words
        })
        .collect();
    let pointers = data
        .iter()
        .zip(&buffers)
        .map(|(words, b)| {
            if b.is_some() {
                words.as_ptr().cast()
            } else {
                ptr::null()
            }
        })
        .collect();
    let mut private = Box::new(ArrayPrivate {
        _data: data,
        buffers: pointers,
        children: children
            .into_iter()
            .map(|c| Box::into_raw(Box::new(c)))
            .collect(),
        dictionary: ptr::null_mut(),
        counter: counter.clone(),
    });
    ArrowArray {
        length,
        null_count,
        offset,
        n_buffers: private.buffers.len() as i64,
        n_children: private.children.len() as i64,
        buffers: private.buffers.as_mut_ptr(),
        children: if private.children.is_empty() {
            ptr::null_mut()
        } else {
            private.children.as_mut_ptr()
        },
        dictionary: ptr::null_mut(),
        release: Some(release_array),
        private_data: Box::into_raw(private).cast(),
    }
}

/// A foreign int32 array without nulls.
pub fn int32s(values: &[i32], counter: &Counter) -> ArrowArray {
    array(
        values.len() as i64,
        0,
        0,
        vec![None, bytes_of(values)],
        Vec::new(),
        counter,
    )
}

// Imports of fixture structs. Every struct a test hands over was built by this fixture (or by
// the crate's own producers) and follows the C Data Interface wherever validation has to trust
// it: strings are NUL-terminated, metadata is as long as its lengths, `children` and `buffers`
// hold as many pointers as counted (or are NULL), buffers are as large as their type needs.

use dlpack_abi::arrow::{
    ArrayStream, ArrowError, DeviceArray, DeviceArrayStream, Schema, SchemaRef,
};

pub fn import_schema(raw: &mut ArrowSchema) -> Result<Schema, ArrowError> {
    // SAFETY: a fixture struct the test owns and hands over (see above).
    unsafe { Schema::from_raw(raw) }
}

pub fn import_array(
    raw: &mut ArrowArray,
    schema: SchemaRef<'_>,
) -> Result<dlpack_abi::arrow::Array, ArrowError> {
    // SAFETY: a fixture array the test owns and hands over, built for `schema`'s type.
    unsafe { dlpack_abi::arrow::Array::from_raw(raw, schema) }
}

pub fn import_device_array(
    raw: &mut ArrowDeviceArray,
    schema: SchemaRef<'_>,
) -> Result<DeviceArray, ArrowError> {
    // SAFETY: as for `import_array`; the device type and event are the test's own claims, and
    // no test reads non-host buffers.
    unsafe { DeviceArray::from_raw(raw, schema) }
}

pub fn import_stream(raw: &mut ArrowArrayStream) -> Result<ArrayStream, ArrowError> {
    // SAFETY: a stream the crate produced and the test handed over.
    unsafe { ArrayStream::from_raw(raw) }
}

pub fn import_device_stream(
    raw: &mut ArrowDeviceArrayStream,
) -> Result<DeviceArrayStream, ArrowError> {
    // SAFETY: as for `import_stream`.
    unsafe { DeviceArrayStream::from_raw(raw) }
}
