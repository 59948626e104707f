//! The I/O buffer pool: one aligned allocation holding a buffer per queue slot, registered
//! with the ring by `uring`. With `uring`, the only place of iogate's `unsafe` code; each
//! block says why it is sound.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

use super::job::EngineError;

/// `count` I/O buffers of `size` bytes each, in one allocation aligned to `align`
/// (the logical block size or more: O_DIRECT needs aligned memory).
pub struct BufferPool {
    ptr: NonNull<u8>,
    layout: Layout,
    size: usize,
    count: usize,
}

impl BufferPool {
    /// Allocates zeroed buffers. Errors: [`EngineError::Alloc`] on a bad layout or no memory.
    pub fn new(count: usize, size: usize, align: usize) -> Result<BufferPool, EngineError> {
        let total = count
            .checked_mul(size)
            .ok_or(EngineError::Alloc(usize::MAX))?;
        let layout = Layout::from_size_align(total.max(1), align.max(4096))
            .map_err(|_| EngineError::Alloc(total))?;
        // SAFETY: the layout has a non-zero size (max(1) above).
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or(EngineError::Alloc(total))?;
        Ok(BufferPool {
            ptr,
            layout,
            size,
            count,
        })
    }

    /// Pointer to buffer `i` (`i < count`).
    pub(super) fn buf(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.count);
        // SAFETY: i < count, so the offset stays inside the allocation.
        unsafe { self.ptr.as_ptr().add(i * self.size) }
    }

    /// The first `len` bytes of buffer `i`, to stamp a write before it is submitted.
    pub fn slice_mut(&mut self, i: usize, len: usize) -> &mut [u8] {
        assert!(i < self.count && len <= self.size);
        // SAFETY: in bounds (checked above); `&mut self` and the slot discipline (a buffer
        // belongs to one request, and is touched only while that request is not in flight)
        // make this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.buf(i), len) }
    }

    /// The first `len` bytes of buffer `i`, to check a completed read.
    pub fn slice(&self, i: usize, len: usize) -> &[u8] {
        assert!(i < self.count && len <= self.size);
        // SAFETY: in bounds (checked above); the read that filled it has completed, so the
        // kernel no longer writes to it, and no mutable reference exists while `&self` lives.
        unsafe { std::slice::from_raw_parts(self.buf(i), len) }
    }

    /// The whole pool as one mutable slice (for filling write payloads before any I/O).
    pub(super) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the allocation is `count * size` bytes, initialised (zeroed), and
        // `&mut self` guarantees no other reference to it exists now.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.count * self.size) }
    }

    pub(super) fn iovecs(&self) -> Vec<libc::iovec> {
        (0..self.count)
            .map(|i| libc::iovec {
                iov_base: self.buf(i).cast(),
                iov_len: self.size,
            })
            .collect()
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        // SAFETY: ptr was allocated with exactly this layout and is freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}
