//! Safe wrappers over librados (and librbd): the only module of this crate
//! that contains `unsafe`.
//!
//! Handles are `NonNull` RAII types freed only in `Drop`. Asynchronous ops
//! return futures fed by the C completion callback (see [`completion`]); a
//! handle waits for its in-flight ops before it is destroyed.

mod bufptr;
mod cluster;
pub mod completion;
mod error;
mod ioctx;
pub mod rbd;
mod version;
mod watch;

pub use bufptr::SharedBuf;
pub use cluster::{librados_version, CommandOutput, ConnectOptions, Rados};
pub use completion::{AioDone, AioFuture, CompletionQueue, Reaped};
pub use error::{CephError, ConnectError, Errno, Result};
pub use ioctx::{IoCtx, ListEntry, ObjectStat, WriteParts};
pub use rbd::{create_image, create_image_in, remove_image, Image, ImageInfo};
pub use version::{Libraries, MIN_LIBRBD};
pub use watch::{
    decode_notify_reply, Notify, NotifyAck, NotifyReply, NotifyTimeout, Watch, WatchEvent,
};
