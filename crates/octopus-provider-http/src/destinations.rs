//! Where a request may go. A URL an untrusted party chose (a tenant's
//! `llm.base_url`) must not reach the operator's own network: its loopback,
//! private and link-local addresses, the cloud metadata service. The host is
//! checked where the connection is made, after DNS resolution, so a name
//! that resolves to a public address when checked and a private one when
//! used (DNS rebinding) gains nothing; an address written into the URL is
//! checked by [`check_literal`] before the request, since no resolution
//! happens for it. No client here follows redirects.

use std::error::Error as StdError;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether `ip` is an address of the public internet: not loopback,
/// private, shared (CGNAT), link-local (where cloud metadata services
/// answer), documentation, benchmarking, multicast or reserved, nor an IPv6
/// form of one of those.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(a == 0                                    // "this network"
        || a == 10                              // private
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || a == 127                             // loopback
        || (a == 169 && b == 254)               // link-local, cloud metadata
        || (a == 172 && (16..32).contains(&b))  // private
        || (a == 192 && b == 0 && c == 0)       // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2)       // documentation
        || (a == 192 && b == 88 && c == 99)     // 6to4 relay
        || (a == 192 && b == 168)               // private
        || (a == 198 && (18..20).contains(&b))  // benchmarking
        || (a == 198 && b == 51 && c == 100)    // documentation
        || (a == 203 && b == 0 && c == 113)     // documentation
        || a >= 224) // multicast, reserved, broadcast
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    let [first, second, ..] = ip.segments();
    let unspecified_or_loopback = ip.is_unspecified() || ip.is_loopback();
    let local_nat64 = first == 0x0064 && second == 0xff9b;
    let discard = first == 0x0100;
    let protocol_assignments = first == 0x2001 && second < 0x0200;
    let documentation = first == 0x2001 && second == 0x0db8;
    let unique_local = (first & 0xfe00) == 0xfc00;
    let link_local = (first & 0xffc0) == 0xfe80;
    let site_local = (first & 0xffc0) == 0xfec0; // deprecated
    let multicast = (first & 0xff00) == 0xff00;
    !(unspecified_or_loopback
        || local_nat64
        || discard
        || protocol_assignments
        || documentation
        || unique_local
        || link_local
        || site_local
        || multicast)
}

/// The IPv4 address an IPv6 address carries, for every form that reaches an
/// IPv4 host through it: such an address is only as public as the one it
/// embeds. Teredo carries two (its server's, and its client's inverted):
/// the less public one is returned.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let b = ip.octets();
    let v4 = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    match s {
        // IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96) and
        // the deprecated IPv4-compatible form (::/96, which holds `::` and
        // `::1` as 0.0.0.0 and 0.0.0.1, neither public).
        [0, 0, 0, 0, 0, 0xffff, high, low]
        | [0, 0, 0, 0, 0xffff, 0, high, low]
        | [0, 0, 0, 0, 0, 0, high, low] => Some(v4(high, low)),
        // NAT64's well-known prefix (64:ff9b::/96, RFC 6052).
        [0x64, 0xff9b, 0, 0, 0, 0, high, low] => Some(v4(high, low)),
        // NAT64's local-use prefix (64:ff9b:1::/48, RFC 8215): a /48 puts
        // the address's first two bytes before bits 64–71 and the last two
        // after them.
        [0x64, 0xff9b, 1, ..] => Some(Ipv4Addr::new(b[6], b[7], b[9], b[10])),
        // 6to4 (2002::/16): the address follows the prefix.
        [0x2002, high, low, ..] => Some(v4(high, low)),
        // Teredo (2001::/32): its server's address, and its client's
        // inverted in the last 32 bits.
        [
            0x2001,
            0,
            server_high,
            server_low,
            _,
            _,
            client_high,
            client_low,
        ] => {
            let server = v4(server_high, server_low);
            let client = v4(!client_high, !client_low);
            Some(if is_public_v4(server) { client } else { server })
        }
        _ => None,
    }
}

/// A host that is not a public address, or that resolves to none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotPublic {
    pub host: String,
}

impl fmt::Display for NotPublic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // One message whether the name has no address or only private ones:
        // a tenant learns nothing about the operator's internal names.
        write!(
            f,
            "{} is not reachable from this server: it is not a public address, or it does not resolve",
            self.host
        )
    }
}

impl StdError for NotPublic {}

/// Refuses an address written into a URL's host when it is not public. A
/// name is left to the resolver of [`public_only_client`].
pub fn check_literal(url: &reqwest::Url) -> Result<(), NotPublic> {
    let literal = match url.host() {
        Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        Some(url::Host::Domain(_)) => None,
        None => {
            return Err(NotPublic {
                host: "(no host)".into(),
            });
        }
    };
    match literal {
        Some(ip) if !is_public(ip) => Err(NotPublic {
            host: url.host_str().unwrap_or_default().to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Resolves names with the system's resolver and keeps only public
/// addresses; a name left with none fails with [`NotPublic`].
#[derive(Clone, Copy, Debug, Default)]
struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let not_public = || -> Box<dyn StdError + Send + Sync> {
                Box::new(NotPublic { host: host.clone() })
            };
            let resolved = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|_| not_public())?;
            let public: Vec<SocketAddr> = resolved.filter(|a| is_public(a.ip())).collect();
            if public.is_empty() {
                return Err(not_public());
            }
            let addresses: Addrs = Box::new(public.into_iter());
            Ok(addresses)
        })
    }
}

/// A client that connects to public addresses only, follows no redirect,
/// and ignores the environment's proxy settings (a proxy would resolve the
/// name itself, past the check).
pub fn public_only_client(
    connect_timeout: Duration,
    read_timeout: Duration,
) -> Result<reqwest::Client, crate::ClientError> {
    crate::install_tls_provider();
    Ok(reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .read_timeout(read_timeout)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .dns_resolver(PublicOnly)
        .build()?)
}

/// The [`NotPublic`] refusal behind a failed request, if that is why it failed.
pub fn not_public(error: &reqwest::Error) -> Option<&NotPublic> {
    let mut source: Option<&(dyn StdError + 'static)> = error.source();
    while let Some(error) = source {
        if let Some(found) = error.downcast_ref::<NotPublic>() {
            return Some(found);
        }
        source = error.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(address: &str) -> bool {
        is_public(address.parse().unwrap())
    }

    #[test]
    fn internal_addresses_are_not_public() {
        for address in [
            "0.0.0.0",
            "10.1.2.3",
            "100.100.100.200", // Alibaba's metadata service, in CGNAT space
            "127.0.0.1",
            "127.0.0.10",
            "169.254.169.254", // AWS, GCP, Azure metadata
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.192",
            "192.168.1.1",
            "198.18.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::10.0.0.1",
            "2002:7f00:1::",
            "fc00::1",
            "fd00:ec2::254", // AWS's IPv6 metadata service
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
        ] {
            assert!(!public(address), "{address} counted as public");
        }
    }

    #[test]
    fn internet_addresses_are_public() {
        for address in [
            "1.1.1.1",
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.1",
            "172.15.255.255",
            "172.32.0.1",
            "192.169.0.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::8.8.8.8",
            "2a00:1450:4001::200e",
        ] {
            assert!(public(address), "{address} counted as internal");
        }
    }

    /// Every IPv6 form that carries an IPv4 address, each spelling a
    /// loopback, a link-local (the metadata service), a private and a public
    /// address: each is as public as the address it carries.
    #[test]
    fn ipv6_forms_are_judged_by_the_ipv4_address_they_carry() {
        let carried: [(&str, [u8; 4], bool); 4] = [
            ("loopback", [127, 0, 0, 1], false),
            ("link-local", [169, 254, 169, 254], false),
            ("private", [10, 1, 2, 3], false),
            ("public", [8, 8, 8, 8], true),
        ];
        type Spelling = fn([u8; 4]) -> String;
        let forms: [(&str, Spelling); 8] = [
            ("mapped", |[a, b, c, d]| format!("::ffff:{a}.{b}.{c}.{d}")),
            ("translated", |[a, b, c, d]| {
                format!("::ffff:0:{a}.{b}.{c}.{d}")
            }),
            ("compatible", |[a, b, c, d]| format!("::{a}.{b}.{c}.{d}")),
            ("NAT64", |[a, b, c, d]| format!("64:ff9b::{a}.{b}.{c}.{d}")),
            ("NAT64 local-use /48", |[a, b, c, d]| {
                format!("64:ff9b:1:{:02x}{:02x}:00{:02x}:{:02x}00::", a, b, c, d)
            }),
            ("6to4", |[a, b, c, d]| {
                format!("2002:{:02x}{:02x}:{:02x}{:02x}::1", a, b, c, d)
            }),
            ("Teredo (client)", |[a, b, c, d]| {
                // A public server (8.8.4.4); the client inverted.
                format!("2001:0:808:404::{:02x}{:02x}:{:02x}{:02x}", !a, !b, !c, !d)
            }),
            ("Teredo (server)", |[a, b, c, d]| {
                // A public client (8.8.4.4, inverted as f7f7:fbfb).
                format!("2001:0:{:02x}{:02x}:{:02x}{:02x}::f7f7:fbfb", a, b, c, d)
            }),
        ];
        for (form, spell) in forms {
            for (kind, v4, expected) in carried {
                let address = spell(v4);
                let ip: Ipv6Addr = address.parse().unwrap_or_else(|e| panic!("{address}: {e}"));
                assert!(
                    embedded_v4(ip).is_some(),
                    "{form} {address}: no IPv4 address found in it"
                );
                assert_eq!(
                    public(&address),
                    expected,
                    "{form} form of a {kind} address: {address}"
                );
                let url: reqwest::Url = format!("http://[{address}]/").parse().unwrap();
                assert_eq!(
                    check_literal(&url).is_ok(),
                    expected,
                    "{form} URL of a {kind} address: {url}"
                );
            }
        }
    }

    #[test]
    fn literal_hosts_are_checked_in_every_spelling() {
        for url in [
            "http://127.0.0.1:8080/v1",
            "http://2130706433/", // 127.0.0.1 as one number
            "http://0x7f.1/",     // and in hex
            "http://[::1]:11434/",
            "http://[::ffff:a9fe:a9fe]/",   // 169.254.169.254
            "http://[::ffff:0:a9fe:a9fe]/", // the same, IPv4-translated
            "http://[::ffff:0:7f00:1]/",    // 127.0.0.1, IPv4-translated
            "http://169.254.169.254/latest/meta-data/",
        ] {
            let url: reqwest::Url = url.parse().unwrap();
            assert!(check_literal(&url).is_err(), "{url} passed");
        }
        for url in ["https://api.openai.com/v1", "http://8.8.8.8/"] {
            assert!(check_literal(&url.parse().unwrap()).is_ok(), "{url}");
        }
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused_before_connecting() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let client = public_only_client(Duration::from_secs(2), Duration::from_secs(2)).unwrap();
        let error = client
            .get(format!("http://localhost:{port}/"))
            .send()
            .await
            .unwrap_err();
        let refused = not_public(&error).expect("refused as not public");
        assert_eq!(refused.host, "localhost");
        listener.set_nonblocking(true).unwrap();
        assert!(
            listener.accept().is_err(),
            "no connection reached the listener"
        );
    }
}
