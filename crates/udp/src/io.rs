//! The driver's view of the outside world: a clock in picoseconds and a
//! datagram socket. [`UdpIo`] is a real UDP socket with ECN; [`crate::mem`]
//! is an in-memory network on a fake clock for deterministic tests.

use fabriclab_engine::{Time, NS, S};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::Instant;

pub trait Io {
    /// Picoseconds since the endpoint started.
    fn now(&self) -> Time;
    /// Sends one datagram (a full socket buffer drops it, like a full NIC queue).
    fn send(&mut self, buf: &[u8], to: SocketAddr) -> std::io::Result<()>;
    /// One received datagram, without blocking: (length, sender, CE-marked).
    fn recv(&mut self, buf: &mut [u8]) -> std::io::Result<Option<(usize, SocketAddr, bool)>>;
    /// Blocks until `at` or until a datagram may be readable, whichever is first.
    fn wait_until(&mut self, at: Time);
    fn local_addr(&self) -> SocketAddr;
    /// Marks outgoing datagrams ECT(0) and asks for the TOS byte of incoming ones.
    fn set_ecn(&mut self, on: bool) -> std::io::Result<()>;
}

/// ECN codepoints in the low two bits of the IPv4 TOS / IPv6 traffic class.
const ECT0: u8 = 0b10;
const CE: u8 = 0b11;
/// Timer slack of the thread that opens a socket: the default 50 us would make
/// every paced wake-up late by that much.
const TIMER_SLACK_NS: libc::c_ulong = 1_000;
const SOCKET_BUFFER: usize = 8 << 20;

/// A nonblocking UDP socket.
pub struct UdpIo {
    sock: UdpSocket,
    start: Instant,
    local: SocketAddr,
}

impl UdpIo {
    pub fn bind(addr: SocketAddr) -> std::io::Result<UdpIo> {
        let domain = socket2::Domain::for_address(addr);
        let s = socket2::Socket::new(domain, socket2::Type::DGRAM, Some(socket2::Protocol::UDP))?;
        // Bursts of a BDP or more must not overflow the default (~200 KB) buffers;
        // the kernel caps these at net.core.{r,w}mem_max.
        let _ = s.set_recv_buffer_size(SOCKET_BUFFER);
        let _ = s.set_send_buffer_size(SOCKET_BUFFER);
        s.bind(&addr.into())?;
        s.set_nonblocking(true)?;
        // SAFETY: PR_SET_TIMERSLACK takes one integer argument and only affects this thread.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, TIMER_SLACK_NS) };
        let sock: UdpSocket = s.into();
        let local = sock.local_addr()?;
        Ok(UdpIo { sock, start: Instant::now(), local })
    }

    fn setsockopt(&self, level: libc::c_int, name: libc::c_int, val: libc::c_int) -> std::io::Result<()> {
        // SAFETY: a plain int option on a socket this struct owns.
        let r = unsafe {
            libc::setsockopt(
                self.sock.as_raw_fd(),
                level,
                name,
                &val as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

impl Io for UdpIo {
    fn now(&self) -> Time {
        self.start.elapsed().as_nanos() as Time * NS
    }

    fn send(&mut self, buf: &[u8], to: SocketAddr) -> std::io::Result<()> {
        match self.sock.send_to(buf, to) {
            Ok(_) => Ok(()),
            // A full socket buffer, or ICMP feedback from an earlier datagram: a loss.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::ConnectionRefused
                        | std::io::ErrorKind::HostUnreachable
                        | std::io::ErrorKind::NetworkUnreachable
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn recv(&mut self, buf: &mut [u8]) -> std::io::Result<Option<(usize, SocketAddr, bool)>> {
        loop {
            match recv_with_tos(self.sock.as_raw_fd(), buf) {
                Ok(r) => return Ok(Some(r)),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(None),
                // ICMP port unreachable from an earlier send surfaces here on Linux.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => continue,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn wait_until(&mut self, at: Time) {
        // Sleep in the kernel rather than spin: on a shared host, spinning
        // endpoints starve each other (and everything else) of CPU.
        let now = self.now();
        if now >= at {
            return;
        }
        let left = at - now;
        let ts = libc::timespec { tv_sec: (left / S) as _, tv_nsec: ((left % S) / NS) as _ };
        let mut pfd = libc::pollfd { fd: self.sock.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd for a socket this struct owns; a null signal mask pointer is allowed.
        unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    }

    fn local_addr(&self) -> SocketAddr {
        self.local
    }

    fn set_ecn(&mut self, on: bool) -> std::io::Result<()> {
        let tos = if on { ECT0 as libc::c_int } else { 0 };
        if self.local.is_ipv4() {
            self.setsockopt(libc::IPPROTO_IP, libc::IP_TOS, tos)?;
            self.setsockopt(libc::IPPROTO_IP, libc::IP_RECVTOS, on as libc::c_int)
        } else {
            self.setsockopt(libc::IPPROTO_IPV6, libc::IPV6_TCLASS, tos)?;
            self.setsockopt(libc::IPPROTO_IPV6, libc::IPV6_RECVTCLASS, on as libc::c_int)
        }
    }
}

/// `recvmsg` that also returns whether the IP header carried CE.
fn recv_with_tos(fd: libc::c_int, buf: &mut [u8]) -> std::io::Result<(usize, SocketAddr, bool)> {
    // SAFETY: all pointers reference live local buffers of the stated sizes;
    // control messages are walked with the CMSG_* macros within msg_controllen.
    unsafe {
        let mut addr: libc::sockaddr_storage = std::mem::zeroed();
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
        let mut control = [0u64; 16];
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_name = &mut addr as *mut _ as *mut libc::c_void;
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        let n = libc::recvmsg(fd, &mut msg, 0);
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut ce = false;
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            let (lvl, ty) = ((*c).cmsg_level, (*c).cmsg_type);
            if (lvl == libc::IPPROTO_IP && ty == libc::IP_TOS) || (lvl == libc::IPPROTO_IPV6 && ty == libc::IPV6_TCLASS)
            {
                // IP_TOS arrives as one byte, IPV6_TCLASS as an int.
                let tos =
                    if ty == libc::IP_TOS { *libc::CMSG_DATA(c) } else { *(libc::CMSG_DATA(c) as *const i32) as u8 };
                ce = tos & CE == CE;
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
        let from = socket2::SockAddr::new(addr, msg.msg_namelen)
            .as_socket()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "datagram from a non-IP address"))?;
        // The driver's buffer holds the largest UDP datagram, so nothing is cut short.
        Ok((n as usize, from, ce))
    }
}
