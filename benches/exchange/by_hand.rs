//! The exchange written by hand, as a C programmer would write it against `dlpack.h` for this one
//! call: the same allocation (struct, layout, owner, shape and strides in one 128-byte block for
//! one dimension) and the checks dlpack-abi makes on this path, each a bare branch, with no error
//! values and no cached metadata; the element type is fixed at `f32` (the dtype is one compare)
//! and the buffer is checked in elements. It shows what one straightforward implementation with
//! these checks costs; `benches/exchange.rs` times it next to the floor.
//!
//! What it checks. Export: at most 64 dimensions, every extent at least 1 (a zero extent is
//! refused here; dlpack-abi exports empty tensors, off this path), the element count without
//! overflow and within the buffer. Import: a non-NULL struct, major version 1, `1 <= ndim <= 64`,
//! a non-NULL shape, the dtype `f32`, row-major strides (NULL only before version 1.2), every
//! extent at least 1, at most `isize::MAX / 4` elements, non-NULL `data`, `data + byte_offset`
//! and the last byte inside the address space, a host-accessible device, no unknown flag, and
//! the start aligned for `f32`.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};

use dlpack_abi::dlpack::Element;
use dlpack_abi::raw::{kDLCPU, DLDevice, DLManagedTensorVersioned, DLPackVersion, DLTensor};

use super::Lent;

/// The one block: the struct, its layout (for the deleter), the owner; the dims follow.
#[repr(C)]
struct Block {
    header: DLManagedTensorVersioned,
    layout: Layout,
    owner: Lent,
}

/// Frees the block (the owner needs no drop).
///
/// # Safety
/// `header` is NULL or a pointer `export` returned, passed once.
unsafe extern "C" fn delete(header: *mut DLManagedTensorVersioned) {
    if header.is_null() {
        return;
    }
    let block = header.cast::<Block>();
    // SAFETY: `export` wrote the layout before handing the block out; it is live until here.
    let layout = unsafe { (*block).layout };
    // SAFETY: allocated by `export` with this layout, freed once.
    unsafe { dealloc(block.cast(), layout) };
}

/// The export: `None` for a shape it refuses.
#[inline(always)]
fn export(lent: Lent, shape: &[i64]) -> Option<*mut DLManagedTensorVersioned> {
    let ndim = shape.len();
    if ndim > 64 {
        return None;
    }
    // At most 64 dimensions: far from overflowing.
    let (layout, dims_offset) = Layout::new::<Block>()
        .extend(Layout::array::<i64>(2 * ndim).ok()?)
        .ok()?;
    // SAFETY: a non-zero size (it holds the struct).
    let block = unsafe { alloc(layout) }.cast::<Block>();
    if block.is_null() {
        handle_alloc_error(layout)
    }
    // The shape, then the strides, where `extend` placed them.
    // SAFETY: inside the allocation (`layout`).
    let dims = unsafe { block.cast::<u8>().add(dims_offset) }.cast::<i64>();
    let mut elements: i64 = 1;
    for dim in (0..ndim).rev() {
        let extent = shape[dim];
        // SAFETY: `dim < ndim`: inside both arrays.
        unsafe { dims.add(dim).write(extent) };
        // SAFETY: as above.
        unsafe { dims.add(ndim + dim).write(elements) };
        let product = if extent >= 1 {
            elements.checked_mul(extent)
        } else {
            None
        };
        let Some(product) = product else {
            // SAFETY: the block just allocated with `layout`, freed once (nothing in it to drop).
            unsafe { dealloc(block.cast(), layout) };
            return None;
        };
        elements = product;
    }
    if elements as u64 > lent.len as u64 {
        // SAFETY: as above.
        unsafe { dealloc(block.cast(), layout) };
        return None;
    }
    let dl_tensor = DLTensor {
        data: lent.start.cast(),
        device: DLDevice {
            device_type: kDLCPU,
            device_id: 0,
        },
        ndim: ndim as i32,
        dtype: f32::DTYPE,
        shape: dims,
        // SAFETY: inside the allocation.
        strides: unsafe { dims.add(ndim) },
        byte_offset: 0,
    };
    let header = DLManagedTensorVersioned {
        version: DLPackVersion { major: 1, minor: 3 },
        manager_ctx: block.cast(),
        deleter: Some(delete),
        flags: 0,
        dl_tensor,
    };
    // SAFETY: the block is allocated and 8-aligned.
    unsafe {
        block.write(Block {
            header,
            layout,
            owner: lent,
        })
    };
    Some(block.cast())
}

/// The import and the slice: `None` for a tensor it refuses.
///
/// # Safety
/// `raw` is NULL or a live struct whose `shape` and `strides` point to `ndim` values, and whose
/// elements at `data + byte_offset` are readable and unwritten for `'a`.
#[inline(always)]
unsafe fn import<'a>(raw: *mut DLManagedTensorVersioned) -> Option<&'a [f32]> {
    if raw.is_null() {
        return None;
    }
    // SAFETY: live (caller).
    let managed = unsafe { &*raw };
    let t = &managed.dl_tensor;
    if managed.version.major != 1 || !(1..=64).contains(&t.ndim) || t.shape.is_null() {
        return None;
    }
    if bytemuck::cast::<_, u32>(t.dtype) != bytemuck::cast::<_, u32>(f32::DTYPE)
        || !t.device.device_type.is_host_accessible()
        || managed.flags & !7 != 0
    {
        return None;
    }
    let ndim = usize::try_from(t.ndim).ok()?;
    // SAFETY: `ndim` values (caller).
    let shape = unsafe { std::slice::from_raw_parts(t.shape, ndim) };
    let mut elements: i64 = 1;
    if t.strides.is_null() {
        if managed.version.minor >= 2 {
            return None;
        }
        for &extent in shape.iter().rev() {
            if extent < 1 {
                return None;
            }
            elements = elements.checked_mul(extent)?;
        }
    } else {
        // SAFETY: `ndim` values (caller).
        let strides = unsafe { std::slice::from_raw_parts(t.strides, ndim) };
        for dim in (0..ndim).rev() {
            if strides[dim] != elements || shape[dim] < 1 {
                return None;
            }
            elements = elements.checked_mul(shape[dim])?;
        }
    }
    if elements > isize::MAX as i64 / 4 || t.data.is_null() {
        return None;
    }
    let byte_offset = usize::try_from(t.byte_offset).ok()?;
    let start = (t.data as usize).checked_add(byte_offset)?;
    start.checked_add(elements as usize * 4 - 1)?;
    if start % 4 != 0 {
        return None;
    }
    let first = t.data.cast::<u8>().wrapping_add(byte_offset).cast::<f32>();
    // SAFETY: checked above; readable while the export lives (the caller's contract).
    Some(unsafe { std::slice::from_raw_parts(first, elements as usize) })
}

/// One exchange, as `exchange::ours` does it.
#[inline(always)]
pub(super) fn exchange(lent: Lent, shape: &[i64]) {
    let raw = export(lent, shape).unwrap();
    let raw = std::hint::black_box(raw);
    // SAFETY: a fresh export, handed over once.
    let values = unsafe { import(raw) }.unwrap();
    std::hint::black_box((values.as_ptr(), values.len()));
    // SAFETY: the struct's own deleter, called once.
    if let Some(deleter) = unsafe { (*raw).deleter } {
        // SAFETY: as above.
        unsafe { deleter(raw) };
    }
}
