//! Which addresses `web_fetch` must not reach on its own: loopback, private, link-local (the
//! cloud metadata service at 169.254.169.254 among them), carrier-grade NAT, unique local,
//! unspecified, multicast, documentation and reserved ranges — and the same addresses wrapped
//! in IPv6 (IPv4-mapped, IPv4-compatible, NAT64, 6to4).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of non-public address `ip` is; None for a public one.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_kind(v4),
        IpAddr::V6(v6) => v6_kind(v6),
    }
}

fn v4_kind(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, _, _) => "unspecified (0.0.0.0/8)",
        (10, _, _) => "private (10/8)",
        (100, 64..=127, _) => "carrier-grade NAT (100.64/10)",
        (127, _, _) => "loopback (127/8)",
        (169, 254, _) => "link-local (169.254/16, the cloud metadata service)",
        (172, 16..=31, _) => "private (172.16/12)",
        (192, 0, 0) => "IETF protocol assignments (192.0.0/24)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (192, 168, _) => "private (192.168/16)",
        (198, 18..=19, _) => "benchmarking (198.18/15)",
        (224..=239, _, _) => "multicast",
        (240..=255, _, _) => "reserved (240/4)",
        _ => return None,
    })
}

fn v6_kind(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = embedded_v4(ip) {
        return v4_kind(v4);
    }
    let s = ip.segments();
    let first = s.first().copied().unwrap_or(0);
    if ip.is_unspecified() {
        Some("unspecified (::)")
    } else if ip.is_loopback() {
        Some("loopback (::1)")
    } else if first & 0xfe00 == 0xfc00 {
        Some("unique local (fc00::/7)")
    } else if first & 0xffc0 == 0xfe80 {
        Some("link-local (fe80::/10)")
    } else if first & 0xffc0 == 0xfec0 {
        Some("site-local (fec0::/10)")
    } else if first & 0xff00 == 0xff00 {
        Some("multicast (ff00::/8)")
    } else if first == 0x2001 && s.get(1) == Some(&0x0db8) {
        Some("documentation (2001:db8::/32)")
    } else if first == 0x0100 && s.get(1..4) == Some(&[0, 0, 0]) {
        Some("discard (100::/64)")
    } else {
        None
    }
}

/// The IPv4 address an IPv6 address carries: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) and 6to4 (`2002:aabb:ccdd::`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail =
        |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => Some(tail(hi, lo)),
        // `::` and `::1` are IPv6's own, not IPv4-compatible addresses.
        [0, 0, 0, 0, 0, 0, hi, lo] if hi != 0 => Some(tail(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(tail(hi, lo)),
        [0x2002, hi, lo, ..] => Some(tail(hi, lo)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ranges_that_stay_closed() {
        let closed = [
            "127.0.0.1",
            "127.8.9.10",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.100.100.200",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fd00:ec2::254",
            "fc00::5",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
        ];
        for a in closed {
            let ip: IpAddr = a.parse().unwrap();
            assert!(non_public(ip).is_some(), "{a} must be closed");
        }
        let open = [
            "93.184.216.34",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "2002:0808:0808::",
        ];
        for a in open {
            let ip: IpAddr = a.parse().unwrap();
            assert_eq!(non_public(ip), None, "{a} is public");
        }
        assert_eq!(
            non_public("169.254.169.254".parse().unwrap()),
            Some("link-local (169.254/16, the cloud metadata service)")
        );
    }
}
