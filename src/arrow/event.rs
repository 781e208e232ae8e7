//! A producer's `sync_event` on an Arrow device array: [`DeviceArray::with_event`] attaches a
//! [`DeviceEvent`] that the array owns until its release, as the device interface asks
//! ("the producer's `private_data` owns the sync event").
#![allow(unsafe_code)]

use alloc::boxed::Box;
use core::ffi::c_void;

use super::{BridgeError, DeviceArray};
use crate::dlpack::DeviceEvent;
use crate::raw::{ArrowArray, ARROW_DEVICE_CPU};

/// What the root node's `private_data` becomes once an event is attached: the node's own
/// release and private data, restored before that release runs, and the event, dropped after.
struct EventKeeper {
    release: unsafe extern "C" fn(*mut ArrowArray),
    private_data: *mut c_void,
    _event: Box<dyn DeviceEvent>,
}

impl DeviceArray {
    /// Attaches a producer's event as this array's `sync_event`, owned by the array until its
    /// release (on whichever thread calls it, after the array's own release): the consumer
    /// waits on it before touching the buffers. [`StreamOrder::record_event`] makes one.
    ///
    /// Works for any device array, imported or built here: the root node's release is
    /// wrapped, so children moved out are unaffected.
    ///
    /// # Errors
    /// [`BridgeError::EventNotAttachable`] for CPU arrays (whose `sync_event` is NULL by the
    /// spec) and arrays that already carry an event; the array is released and the event
    /// dropped then.
    ///
    /// [`StreamOrder::record_event`]: crate::dlpack::StreamOrder::record_event
    ///
    /// ```
    /// use core::ffi::c_void;
    /// use core::ptr::NonNull;
    /// use dlpack_abi::arrow::{Array, DeviceArray};
    /// use dlpack_abi::dlpack::DeviceEvent;
    /// use dlpack_abi::raw::ARROW_DEVICE_CUDA_HOST;
    ///
    /// /// Stands for a recorded `CUevent` (a pointer-sized handle).
    /// struct Recorded(usize);
    /// // SAFETY: points to the handle, which lives as long as `self`.
    /// unsafe impl DeviceEvent for Recorded {
    ///     fn event_ptr(&self) -> NonNull<c_void> { NonNull::from(&self.0).cast() }
    /// }
    ///
    /// let values = Array::from_vec(vec![1u32, 2, 3])?;
    /// // SAFETY: CPU memory is host memory, which pinned (CUDA host) memory is.
    /// let array = unsafe { DeviceArray::new(values, ARROW_DEVICE_CUDA_HOST, 0, core::ptr::null_mut()) };
    /// let array = array.with_event(Box::new(Recorded(0xe0e0)))?;
    /// let event = array.sync_event().unwrap();
    /// // SAFETY: the event points to the handle, alive until the array is released.
    /// assert_eq!(unsafe { event.cast::<usize>().read() }, 0xe0e0);
    /// # Ok::<(), dlpack_abi::arrow::ArrowError>(())
    /// ```
    pub fn with_event(mut self, event: Box<dyn DeviceEvent>) -> Result<Self, BridgeError> {
        if self.device_type() == ARROW_DEVICE_CPU || self.sync_event().is_some() {
            return Err(BridgeError::EventNotAttachable);
        }
        let root = &mut self.inner.raw_mut().array;
        let Some(release) = root.release else {
            // An owned array is never released; refuse rather than trust it.
            return Err(BridgeError::EventNotAttachable);
        };
        let event_ptr = event.event_ptr();
        let keeper = Box::new(EventKeeper {
            release,
            private_data: root.private_data,
            _event: event,
        });
        root.private_data = Box::into_raw(keeper).cast();
        root.release = Some(release_with_event);
        self.inner.raw_mut().sync_event = event_ptr.as_ptr();
        self.waited = false;
        self.ordered_on = None;
        Ok(self)
    }
}

/// The root node's release once an event is attached: restores the node's own release and
/// private data, runs that release, then drops the event.
///
/// # Safety
/// `array` is a live root node whose `private_data` [`DeviceArray::with_event`] set, released
/// once (the C Data Interface's release contract).
unsafe extern "C" fn release_with_event(array: *mut ArrowArray) {
    // SAFETY: a live, writable node (release contract).
    let node = unsafe { &mut *array };
    // SAFETY: `with_event` made `private_data` a boxed keeper, freed only here, once.
    let keeper = unsafe { Box::from_raw(node.private_data.cast::<EventKeeper>()) };
    node.private_data = keeper.private_data;
    node.release = Some(keeper.release);
    // SAFETY: the node's own release, with its own private data restored, called once.
    unsafe { (keeper.release)(array) };
    drop(keeper);
}
