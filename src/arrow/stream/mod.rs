//! Arrow streams, both ways and both kinds: consumed as Rust iterators (`consume.rs`:
//! [`ArrayStream`], [`DeviceArrayStream`]), their errors (`error.rs`: [`ProducerError`],
//! [`StreamError`]), produced from Rust iterators (`export.rs`, `alloc`), and the async device
//! stream, producer (`async_producer.rs`, `alloc`) and consumer (`async_consumer.rs` with its C
//! callbacks, `std`).

#[cfg(feature = "std")]
mod async_consumer;
#[cfg(feature = "alloc")]
mod async_producer;
mod consume;
mod error;
#[cfg(feature = "alloc")]
mod export;

#[cfg(feature = "std")]
pub use async_consumer::{AsyncConsumer, AsyncHandler, AsyncStreamError};
#[cfg(feature = "alloc")]
pub use async_producer::{AsyncProducer, AsyncState};
pub use consume::{ArrayStream, DeviceArrayStream, Stream, StreamStruct};
pub use error::{ProducerError, StreamError};
