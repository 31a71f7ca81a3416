//! The driver's view of the outside world: a clock in picoseconds and a
//! datagram socket. [`UdpIo`] is a real UDP socket with ECN, batched I/O
//! (`sendmmsg`/`recvmmsg`) and UDP GSO/GRO where the kernel offers them;
//! [`crate::mem`] is an in-memory network on a fake clock for deterministic tests.

use fabriclab_engine::{Time, NS, S};
use serde::Serialize;
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

    /// Sends every datagram of `batch`, in order (as many `send`s unless the
    /// socket can do better). Datagrams the socket cannot take are lost.
    fn send_batch(&mut self, batch: &TxBatch) -> std::io::Result<()> {
        for (d, to) in batch.iter() {
            self.send(d, to)?;
        }
        Ok(())
    }

    /// Replaces the contents of `batch` with the datagrams waiting, without
    /// blocking (as many `recv`s as `batch` has slots unless the socket can do better).
    fn recv_batch(&mut self, batch: &mut RxBatch) -> std::io::Result<()> {
        batch.clear();
        for slot in 0..batch.slots {
            let at = slot * RX_SLOT;
            match self.recv(&mut batch.buf[at..at + RX_SLOT])? {
                Some((n, from, ce)) => batch.dgrams.push(RxDgram { at, len: n, from, ce }),
                None => break,
            }
        }
        Ok(())
    }

    /// Counters of the socket layer (syscalls, offloads); zero where it keeps none.
    fn io_stats(&self) -> IoStats {
        IoStats::default()
    }
}

/// Datagrams queued for one send call, back to back in one buffer: the
/// endpoint encodes each in place (no copy between the encoder and the
/// socket), then the socket sends them all at once.
#[derive(Default)]
pub struct TxBatch {
    buf: Vec<u8>,
    /// (start in `buf`, length, destination) of each committed datagram.
    dgrams: Vec<(usize, usize, SocketAddr)>,
}

impl TxBatch {
    fn committed_end(&self) -> usize {
        self.dgrams.last().map_or(0, |&(at, len, _)| at + len)
    }

    /// Where to append the next datagram (after the committed ones); then
    /// [`commit`](Self::commit) or [`discard`](Self::discard) it.
    pub fn staging(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// The bytes appended since the last commit or discard.
    pub fn staged(&self) -> &[u8] {
        &self.buf[self.committed_end()..]
    }

    /// Queues the staged bytes as one datagram to `to`.
    pub fn commit(&mut self, to: SocketAddr) {
        let at = self.committed_end();
        self.dgrams.push((at, self.buf.len() - at, to));
    }

    /// Forgets the staged bytes.
    pub fn discard(&mut self) {
        let end = self.committed_end();
        self.buf.truncate(end);
    }

    /// Queues a copy of `data` to `to` (tests and tools; the endpoint encodes in place).
    pub fn push(&mut self, data: &[u8], to: SocketAddr) {
        self.discard();
        self.buf.extend_from_slice(data);
        self.commit(to);
    }

    pub fn len(&self) -> usize {
        self.dgrams.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dgrams.is_empty()
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.dgrams.clear();
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], SocketAddr)> {
        self.dgrams.iter().map(|&(at, len, to)| (&self.buf[at..at + len], to))
    }
}

/// Bytes of one receive slot: the largest UDP datagram, or one GRO batch of
/// segments (the kernel coalesces at most 64 KB).
pub const RX_SLOT: usize = 65_536;

#[derive(Clone, Copy, Debug)]
struct RxDgram {
    at: usize,
    len: usize,
    from: SocketAddr,
    ce: bool,
}

/// Reusable receive buffers: `slots` datagrams (or GRO batches) per call,
/// received in place and read by the endpoint without another copy.
pub struct RxBatch {
    buf: Vec<u8>,
    slots: usize,
    dgrams: Vec<RxDgram>,
}

impl Default for RxBatch {
    fn default() -> Self {
        RxBatch::new(0)
    }
}

impl RxBatch {
    /// Room for `slots` receives of up to [`RX_SLOT`] bytes each.
    pub fn new(slots: usize) -> RxBatch {
        // Zeroed pages are mapped lazily: slots that small datagrams never
        // fill cost address space, not memory.
        RxBatch { buf: vec![0; slots * RX_SLOT], slots, dgrams: Vec::with_capacity(slots) }
    }

    /// Datagrams received by the last `recv_batch`.
    pub fn len(&self) -> usize {
        self.dgrams.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dgrams.is_empty()
    }

    pub fn clear(&mut self) {
        self.dgrams.clear();
    }

    /// Datagram `i`: (bytes, sender, CE-marked).
    pub fn get(&self, i: usize) -> (&[u8], SocketAddr, bool) {
        let d = self.dgrams[i];
        (&self.buf[d.at..d.at + d.len], d.from, d.ce)
    }

    /// Marks datagram `i` CE (fault injection).
    pub fn set_ce(&mut self, i: usize) {
        self.dgrams[i].ce = true;
    }
}

/// Counters of [`UdpIo`]: how many syscalls moved how many datagrams, and
/// whether the offloads are in use.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct IoStats {
    /// `sendmmsg`/`sendto` calls and the datagrams they carried.
    pub send_calls: u64,
    pub datagrams_out: u64,
    /// `recvmmsg`/`recvmsg` calls that returned data, and the datagrams they carried.
    pub recv_calls: u64,
    pub datagrams_in: u64,
    /// Sends that the kernel segmented (UDP GSO: one buffer, many datagrams).
    pub gso_sends: u64,
    /// Receives that held several coalesced datagrams (UDP GRO).
    pub gro_receives: u64,
    /// Waits that spun (`busy_poll`), and those of them that ended on a readable socket.
    pub busy_polls: u64,
    pub busy_poll_hits: u64,
    /// Whether GSO and GRO are in use (asked for by the configuration and offered by the kernel).
    pub gso: bool,
    pub gro: bool,
}

/// Socket options beyond the address; [`UdpIo::bind`] uses the defaults.
#[derive(Clone, Copy, Debug)]
pub struct IoOptions {
    /// Send runs of equal-size datagrams to one address as one UDP GSO send.
    pub gso: bool,
    /// Ask for coalesced receives (UDP GRO).
    pub gro: bool,
    /// Spin this long (ps) on the non-blocking socket before sleeping in `ppoll`.
    pub busy_poll: Time,
}

impl Default for IoOptions {
    fn default() -> Self {
        IoOptions { gso: true, gro: true, busy_poll: 0 }
    }
}

/// ECN codepoints in the low two bits of the IPv4 TOS / IPv6 traffic class.
const ECT0: u8 = 0b10;
const CE: u8 = 0b11;
/// Timer slack of the thread that opens a socket: the default 50 us would make
/// every paced wake-up late by that much.
const TIMER_SLACK_NS: libc::c_ulong = 1_000;
const SOCKET_BUFFER: usize = 8 << 20;

/// Messages per `sendmmsg`/`recvmmsg` call.
const MMSG: usize = 64;
/// Segments per GSO send: the kernel's UDP_MAX_SEGMENTS (64 before 5.18,
/// 128 since; the smaller works everywhere).
const GSO_MAX_SEGMENTS: usize = 64;
/// Bytes per GSO send: an IPv4 datagram's payload is at most 65,507 bytes.
const GSO_MAX_BYTES: usize = 65_000;
/// Receive slots per call with GRO on: each may hold ~44 full-size datagrams,
/// and the endpoint must get back to sending credit before it has read thousands.
const GRO_SLOTS: usize = 8;

/// A nonblocking UDP socket.
pub struct UdpIo {
    sock: UdpSocket,
    start: Instant,
    local: SocketAddr,
    busy_poll: Time,
    stats: IoStats,
}

impl UdpIo {
    /// A socket with the default [`IoOptions`] (GSO and GRO where offered, no busy polling).
    pub fn bind(addr: SocketAddr) -> std::io::Result<UdpIo> {
        Self::bind_with(addr, IoOptions::default())
    }

    pub fn bind_with(addr: SocketAddr, opts: IoOptions) -> std::io::Result<UdpIo> {
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
        let mut io = UdpIo { sock, start: Instant::now(), local, busy_poll: opts.busy_poll, stats: IoStats::default() };
        // Offloads are probed, not assumed: a kernel (or a sandbox) without them
        // refuses the option, and the socket falls back to plain batches.
        // GSO is asked for per send (a control message); setting the socket
        // option once tells whether the kernel knows it, then it is cleared.
        io.stats.gso = opts.gso
            && io.setsockopt(libc::IPPROTO_UDP, libc::UDP_SEGMENT, 1200).is_ok()
            && io.setsockopt(libc::IPPROTO_UDP, libc::UDP_SEGMENT, 0).is_ok();
        io.stats.gro = opts.gro && io.setsockopt(libc::IPPROTO_UDP, libc::UDP_GRO, 1).is_ok();
        Ok(io)
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

    /// Whether a datagram is waiting, without blocking.
    fn readable(&self) -> bool {
        let mut pfd = libc::pollfd { fd: self.sock.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one pollfd for a socket this struct owns, zero timeout.
        unsafe { libc::poll(&mut pfd, 1, 0) > 0 }
    }
}

/// A send error that loses the datagram (as a full NIC queue would) rather than failing the endpoint.
fn is_loss(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::HostUnreachable
            | std::io::ErrorKind::NetworkUnreachable
    )
}

impl Io for UdpIo {
    fn now(&self) -> Time {
        self.start.elapsed().as_nanos() as Time * NS
    }

    fn send(&mut self, buf: &[u8], to: SocketAddr) -> std::io::Result<()> {
        self.stats.send_calls += 1;
        self.stats.datagrams_out += 1;
        match self.sock.send_to(buf, to) {
            Ok(_) => Ok(()),
            // A full socket buffer, or ICMP feedback from an earlier datagram: a loss.
            Err(e) if is_loss(&e) => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn recv(&mut self, buf: &mut [u8]) -> std::io::Result<Option<(usize, SocketAddr, bool)>> {
        loop {
            match recv_with_tos(self.sock.as_raw_fd(), buf) {
                Ok(r) => {
                    self.stats.recv_calls += 1;
                    self.stats.datagrams_in += 1;
                    return Ok(Some(r));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(None),
                // ICMP port unreachable from an earlier send surfaces here on Linux.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => continue,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn send_batch(&mut self, batch: &TxBatch) -> std::io::Result<()> {
        let fd = self.sock.as_raw_fd();
        let d = &batch.dgrams;
        let mut i = 0;
        while i < d.len() {
            // One message per run of datagrams that GSO can send as one: same
            // destination, equal sizes (the last may be shorter), contiguous in
            // `buf` (the batch appends them in order).
            // SAFETY: plain C structs for which all-zero is a valid value.
            let mut hdrs: [libc::mmsghdr; MMSG] = unsafe { std::mem::zeroed() };
            let mut iovs: [libc::iovec; MMSG] = unsafe { std::mem::zeroed() };
            let mut names: [libc::sockaddr_storage; MMSG] = unsafe { std::mem::zeroed() };
            let mut ctrl = [[0u64; 4]; MMSG];
            let mut first = [0usize; MMSG + 1];
            let mut m = 0;
            while m < MMSG && i < d.len() {
                let (at, seg, to) = d[i];
                let (mut n, mut total) = (1, seg);
                while self.stats.gso && i + n < d.len() && n < GSO_MAX_SEGMENTS {
                    let (_, len, to2) = d[i + n];
                    if to2 != to || len > seg || total + len > GSO_MAX_BYTES {
                        break;
                    }
                    total += len;
                    n += 1;
                    if len < seg {
                        break;
                    }
                }
                let name = socket2::SockAddr::from(to);
                // SAFETY: `name` holds `name.len()` valid bytes of a sockaddr, and
                // sockaddr_storage is large enough for any of them.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        name.as_ptr() as *const u8,
                        &mut names[m] as *mut _ as *mut u8,
                        name.len() as usize,
                    )
                };
                iovs[m] = libc::iovec { iov_base: batch.buf[at..].as_ptr() as *mut libc::c_void, iov_len: total };
                let h = &mut hdrs[m].msg_hdr;
                h.msg_name = &mut names[m] as *mut _ as *mut libc::c_void;
                h.msg_namelen = name.len();
                h.msg_iov = &mut iovs[m];
                h.msg_iovlen = 1;
                if n > 1 {
                    h.msg_control = ctrl[m].as_mut_ptr() as *mut libc::c_void;
                    // SAFETY: CMSG_SPACE of a u16 (24 bytes) fits in the 32-byte
                    // buffer; the header is written within msg_controllen.
                    unsafe {
                        h.msg_controllen = libc::CMSG_SPACE(2) as _;
                        let c = libc::CMSG_FIRSTHDR(h);
                        (*c).cmsg_level = libc::IPPROTO_UDP;
                        (*c).cmsg_type = libc::UDP_SEGMENT;
                        (*c).cmsg_len = libc::CMSG_LEN(2) as _;
                        std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut u16, seg as u16);
                    }
                }
                first[m] = i;
                i += n;
                m += 1;
                first[m] = i;
            }
            // SAFETY: `m` initialised headers whose pointers reference the locals
            // above and `batch.buf`, all alive for the call.
            let sent = unsafe { libc::sendmmsg(fd, hdrs.as_mut_ptr(), m as libc::c_uint, 0) };
            self.stats.send_calls += 1;
            if sent < 0 {
                let e = std::io::Error::last_os_error();
                let gso_refused = first[1] - first[0] > 1
                    && matches!(e.raw_os_error(), Some(libc::EIO | libc::EINVAL | libc::EOPNOTSUPP));
                if gso_refused {
                    // A device without checksum offload (EIO) or a route whose MTU
                    // is below the segment size (EINVAL) refuses GSO: send plain
                    // batches from now on, starting with this run.
                    self.stats.gso = false;
                    i = first[0];
                } else if e.kind() == std::io::ErrorKind::WouldBlock {
                    return Ok(()); // socket buffer full: the rest is lost, as on a full NIC queue
                } else if is_loss(&e) || e.kind() == std::io::ErrorKind::Interrupted {
                    i = first[1]; // this message is lost; go on with the next
                } else {
                    return Err(e);
                }
                continue;
            }
            let sent = sent as usize;
            for k in 0..sent {
                self.stats.datagrams_out += (first[k + 1] - first[k]) as u64;
                self.stats.gso_sends += (first[k + 1] - first[k] > 1) as u64;
            }
            // A short count: the next call starts at the message that failed
            // and reports its error.
            i = first[sent];
        }
        Ok(())
    }

    fn recv_batch(&mut self, batch: &mut RxBatch) -> std::io::Result<()> {
        batch.clear();
        let slots = batch.slots.min(MMSG).min(if self.stats.gro { GRO_SLOTS } else { MMSG });
        if slots == 0 {
            return Ok(());
        }
        // SAFETY: plain C structs for which all-zero is a valid value.
        let mut hdrs: [libc::mmsghdr; MMSG] = unsafe { std::mem::zeroed() };
        let mut iovs: [libc::iovec; MMSG] = unsafe { std::mem::zeroed() };
        let mut names: [libc::sockaddr_storage; MMSG] = unsafe { std::mem::zeroed() };
        let mut ctrl = [[0u64; 8]; MMSG];
        for k in 0..slots {
            iovs[k] =
                libc::iovec { iov_base: batch.buf[k * RX_SLOT..].as_mut_ptr() as *mut libc::c_void, iov_len: RX_SLOT };
            let h = &mut hdrs[k].msg_hdr;
            h.msg_name = &mut names[k] as *mut _ as *mut libc::c_void;
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            h.msg_iov = &mut iovs[k];
            h.msg_iovlen = 1;
            h.msg_control = ctrl[k].as_mut_ptr() as *mut libc::c_void;
            h.msg_controllen = std::mem::size_of_val(&ctrl[k]) as _;
        }
        let n = loop {
            // SAFETY: `slots` headers pointing into locals and `batch.buf`
            // (slots x RX_SLOT bytes), alive for the call; no timeout.
            let n = unsafe {
                libc::recvmmsg(
                    self.sock.as_raw_fd(),
                    hdrs.as_mut_ptr(),
                    slots as libc::c_uint,
                    libc::MSG_DONTWAIT,
                    std::ptr::null_mut(),
                )
            };
            if n >= 0 {
                break n as usize;
            }
            let e = std::io::Error::last_os_error();
            match e.kind() {
                std::io::ErrorKind::WouldBlock => return Ok(()),
                // ICMP port unreachable from an earlier send surfaces here on Linux.
                std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::Interrupted => continue,
                _ => return Err(e),
            }
        };
        self.stats.recv_calls += 1;
        for (k, hdr) in hdrs.iter().enumerate().take(n) {
            let h = &hdr.msg_hdr;
            let len = hdr.msg_len as usize;
            // SAFETY: the kernel filled msg_name (msg_namelen bytes) and the control
            // messages (msg_controllen bytes), walked with the CMSG_* macros.
            let (ce, seg, from) = unsafe {
                let (ce, seg) = read_cmsgs(h);
                let from = socket2::SockAddr::new(names[k], h.msg_namelen).as_socket();
                (ce, seg, from)
            };
            // A datagram from a non-IP address, or cut short (impossible with
            // 64 KB slots), is not one of ours.
            let Some(from) = from.filter(|_| h.msg_flags & libc::MSG_TRUNC == 0) else { continue };
            let at = k * RX_SLOT;
            // GRO: `len` bytes of `seg`-byte datagrams (the last may be shorter).
            let seg = if seg > 0 { seg } else { len.max(1) };
            self.stats.gro_receives += (len > seg) as u64;
            let mut off = 0;
            while off < len {
                let l = seg.min(len - off);
                batch.dgrams.push(RxDgram { at: at + off, len: l, from, ce });
                off += l;
            }
        }
        self.stats.datagrams_in += batch.dgrams.len() as u64;
        Ok(())
    }

    fn wait_until(&mut self, at: Time) {
        let now = self.now();
        if now >= at {
            return;
        }
        if self.busy_poll > 0 {
            // Spin first: a datagram that arrives within `busy_poll` is handled
            // without the wake-up latency of a sleep (tens of us on a busy host).
            let spin_end = at.min(now + self.busy_poll);
            self.stats.busy_polls += 1;
            loop {
                if self.readable() {
                    self.stats.busy_poll_hits += 1;
                    return;
                }
                if self.now() >= spin_end {
                    break;
                }
                std::hint::spin_loop();
            }
        }
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

    fn io_stats(&self) -> IoStats {
        self.stats
    }
}

/// The control messages of a received datagram: (CE-marked, GRO segment size or 0).
///
/// # Safety
/// `h` must be a header the kernel filled, its control buffer still alive.
unsafe fn read_cmsgs(h: &libc::msghdr) -> (bool, usize) {
    let (mut ce, mut seg) = (false, 0);
    let mut c = libc::CMSG_FIRSTHDR(h);
    while !c.is_null() {
        let (lvl, ty) = ((*c).cmsg_level, (*c).cmsg_type);
        if (lvl == libc::IPPROTO_IP && ty == libc::IP_TOS) || (lvl == libc::IPPROTO_IPV6 && ty == libc::IPV6_TCLASS) {
            // IP_TOS arrives as one byte, IPV6_TCLASS as an int.
            let tos = if ty == libc::IP_TOS {
                *libc::CMSG_DATA(c)
            } else {
                std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const i32) as u8
            };
            ce = tos & CE == CE;
        } else if lvl == libc::IPPROTO_UDP && ty == libc::UDP_GRO {
            seg = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::c_int).max(0) as usize;
        }
        c = libc::CMSG_NXTHDR(h, c);
    }
    (ce, seg)
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
        let (ce, _) = read_cmsgs(&msg);
        let from = socket2::SockAddr::new(addr, msg.msg_namelen)
            .as_socket()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "datagram from a non-IP address"))?;
        // The driver's buffer holds the largest UDP datagram, so nothing is cut short.
        Ok((n as usize, from, ce))
    }
}
