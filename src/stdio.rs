//! Standard input and output for a protocol server, read and written by the runtime's own
//! event loop when they are pipes or sockets (what editors and agent hosts give a server).
//!
//! `tokio::io::stdin()`/`stdout()` do every read and write on the blocking thread pool: each
//! message crosses threads twice more than it needs to, which was most of a `workspace/symbol`
//! answer's time once the index answered in a tenth of a millisecond. A pipe (Helix, the MCP
//! Python SDK) is reopened through `/proc/self/fd` as rmcp's `stdio_pipes` does, so its
//! non-blocking flag stays private; a Unix socket (libuv's stdio: Neovim, VS Code, Node hosts)
//! cannot be reopened, so its flag is set and put back when the server is done. A terminal or
//! a file keeps tokio's blocking handles.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;

/// Standard input as an `AsyncRead`.
pub enum Input {
    Pipe(pipe::Receiver),
    /// The flags are put back when the socket is dropped.
    Socket(UnixStream, #[allow(dead_code)] Restore),
    Blocking(tokio::io::Stdin),
}

/// Standard output as an `AsyncWrite`.
pub enum Output {
    Pipe(pipe::Sender),
    /// The flags are put back when the socket is dropped.
    Socket(UnixStream, #[allow(dead_code)] Restore),
    Blocking(tokio::io::Stdout),
}

/// Puts a descriptor's file status flags back as they were (O_NONBLOCK is shared with every
/// process holding the same open file), when the server is done with it.
pub struct Restore {
    fd: RawFd,
    flags: libc::c_int,
}

impl Drop for Restore {
    fn drop(&mut self) {
        // SAFETY: fcntl on a descriptor number; a closed one only makes it fail.
        unsafe {
            libc::fcntl(self.fd, libc::F_SETFL, self.flags);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Pipe,
    Socket,
    Other,
}

fn kind(fd: RawFd) -> Kind {
    // SAFETY: `stat` is plain data; fstat fills it or fails.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Kind::Other;
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFIFO => Kind::Pipe,
        libc::S_IFSOCK if socket_is_unix(fd) => Kind::Socket,
        _ => Kind::Other,
    }
}

fn socket_is_unix(fd: RawFd) -> bool {
    // SAFETY: getsockname writes at most `len` bytes into `addr`.
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    let ok = unsafe { libc::getsockname(fd, &mut addr as *mut _ as *mut libc::sockaddr, &mut len) } == 0;
    ok && addr.ss_family as libc::c_int == libc::AF_UNIX
}

/// `fd` (a pipe) opened again, non-blocking, on an open file description of its own.
fn reopen_nonblocking(fd: RawFd, write: bool) -> io::Result<OwnedFd> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(!write)
        .write(write)
        .custom_flags(libc::O_NONBLOCK)
        .open(format!("/proc/self/fd/{fd}"))?;
    Ok(file.into())
}

/// A duplicate of `fd` in non-blocking mode, and how to put the flags back.
fn nonblocking_dup(fd: RawFd) -> io::Result<(OwnedFd, Restore)> {
    // SAFETY: fd 0 and 1 are open for the life of the process (or dup fails).
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let owned = borrowed.try_clone_to_owned()?;
    let flags = unsafe { libc::fcntl(owned.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    if unsafe { libc::fcntl(owned.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((owned, Restore { fd, flags }))
}

fn unix_stream(fd: OwnedFd) -> io::Result<UnixStream> {
    // SAFETY: the descriptor is an AF_UNIX socket we own, already non-blocking.
    let std = unsafe { std::os::unix::net::UnixStream::from_raw_fd(std::os::fd::IntoRawFd::into_raw_fd(fd)) };
    UnixStream::from_std(std)
}

/// `fd` on the event loop: `pipe` gets it reopened non-blocking, `socket` a non-blocking
/// stream and what puts its flags back; `None` for anything else (a terminal, a file) or when
/// switching failed, which keeps tokio's blocking handle.
fn on_event_loop<T>(
    fd: RawFd,
    write: bool,
    pipe: impl FnOnce(OwnedFd) -> io::Result<T>,
    socket: impl FnOnce(UnixStream, Restore) -> T,
) -> Option<T> {
    let switched = || -> io::Result<Option<T>> {
        Ok(match kind(fd) {
            Kind::Pipe => Some(pipe(reopen_nonblocking(fd, write)?)?),
            Kind::Socket => {
                let (owned, restore) = nonblocking_dup(fd)?;
                Some(socket(unix_stream(owned)?, restore))
            }
            Kind::Other => None,
        })
    };
    switched().unwrap_or_else(|e| {
        tracing::debug!("fd {fd} stays blocking: {e}");
        None
    })
}

/// Standard input; must be called inside the runtime.
pub fn input() -> Input {
    on_event_loop(
        0,
        false,
        |fd| Ok(Input::Pipe(pipe::Receiver::from_owned_fd(fd)?)),
        Input::Socket,
    )
    .unwrap_or_else(|| Input::Blocking(tokio::io::stdin()))
}

/// Standard output; must be called inside the runtime.
pub fn output() -> Output {
    on_event_loop(
        1,
        true,
        |fd| Ok(Output::Pipe(pipe::Sender::from_owned_fd(fd)?)),
        Output::Socket,
    )
    .unwrap_or_else(|| Output::Blocking(tokio::io::stdout()))
}

impl AsyncRead for Input {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Input::Pipe(p) => Pin::new(p).poll_read(cx, buf),
            Input::Socket(s, _) => Pin::new(s).poll_read(cx, buf),
            Input::Blocking(b) => Pin::new(b).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Output {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Output::Pipe(p) => Pin::new(p).poll_write(cx, data),
            Output::Socket(s, _) => Pin::new(s).poll_write(cx, data),
            Output::Blocking(b) => Pin::new(b).poll_write(cx, data),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Output::Pipe(p) => Pin::new(p).poll_flush(cx),
            Output::Socket(s, _) => Pin::new(s).poll_flush(cx),
            Output::Blocking(b) => Pin::new(b).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Output::Pipe(p) => Pin::new(p).poll_shutdown(cx),
            Output::Socket(s, _) => Pin::new(s).poll_shutdown(cx),
            Output::Blocking(b) => Pin::new(b).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_of_descriptors() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(kind(a.as_raw_fd()), Kind::Socket);
        let file = tempfile::tempfile().unwrap();
        assert_eq!(kind(file.as_raw_fd()), Kind::Other);
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        assert_eq!(kind(fds[0]), Kind::Pipe);
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        drop(b);
    }
}
