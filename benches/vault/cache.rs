//! A cold page cache without root: every note's pages dropped with
//! `posix_fadvise(POSIX_FADV_DONTNEED)` (clean pages only, which is all a vault read by the
//! benchmark has), and how much of the vault is resident checked with `mincore`, before and
//! after. The disk under this machine may still have a cache of its own (a virtual disk's
//! host): the figures say what the guest's page cache no longer holds.

use std::os::fd::AsRawFd;
use std::path::Path;

/// How much of the vault the page cache held before and after the eviction.
pub struct Eviction {
    pub files: usize,
    pub bytes: u64,
    pub resident_before: u64,
    pub resident_after: u64,
}

impl std::fmt::Display for Eviction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let share = |b: u64| 100.0 * b as f64 / self.bytes.max(1) as f64;
        write!(
            f,
            "page cache dropped for {} notes ({:.1} MB): {:.1} % resident before, {:.1} % after",
            self.files,
            self.bytes as f64 / 1e6,
            share(self.resident_before),
            share(self.resident_after)
        )
    }
}

/// Drops the page cache of every note under `root` and says what it held.
pub fn evict(root: &Path) -> Eviction {
    let scan = scholia::vault::scan::scan(root);
    let mut e = Eviction {
        files: 0,
        bytes: 0,
        resident_before: 0,
        resident_after: 0,
    };
    for note in &scan.notes {
        let Ok(file) = std::fs::File::open(root.join(&note.rel)) else {
            continue;
        };
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        e.files += 1;
        e.bytes += len;
        e.resident_before += resident(&file, len);
        // Pages not yet written back are not dropped (a vault copied a moment ago stayed
        // 100 % resident): written first.
        let _ = file.sync_data();
        // SAFETY: a valid descriptor; the call only advises the kernel.
        unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        e.resident_after += resident(&file, len);
    }
    e
}

/// Bytes of `file` in the page cache (whole pages, capped at its length).
fn resident(file: &std::fs::File, len: u64) -> u64 {
    if len == 0 {
        return 0;
    }
    // SAFETY: `sysconf` has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
    let pages = len.div_ceil(page) as usize;
    // SAFETY: a read-only shared mapping of `len` bytes of an open file, unmapped below; the
    // vector holds one byte per page as mincore requires.
    unsafe {
        let at = libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        if at == libc::MAP_FAILED {
            return 0;
        }
        let mut vec = vec![0u8; pages];
        let ok = libc::mincore(at, len as usize, vec.as_mut_ptr()) == 0;
        libc::munmap(at, len as usize);
        if !ok {
            return 0;
        }
        let held = vec.iter().filter(|b| **b & 1 == 1).count() as u64;
        (held * page).min(len)
    }
}
