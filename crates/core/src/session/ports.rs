//! The ports of a Session (`openSandboxSession({ ports })`, `session.domain(port)`): the rule for
//! the declared ports and the lookup of a port's URL in the provider's routes. Pure.
//!
//! Source: vercel-sandbox-protocol.md §6.3 (Route `{url, subdomain, port}`; the SDK's `ports`:
//! "up to 15") and the Vercel SDK 3.5.0 `Session.domain` (throws for a port without a route).

use serde::Deserialize;

use crate::error::{Error, ErrorCode, Operation, Result};

/// Most ports one Box declares (Vercel's limit).
pub const MAX_PORTS: usize = 15;

fn invalid(message: String) -> Error {
    Error::new(ErrorCode::InvalidArgument, message).with_operation(Operation::Ports)
}

/// Checks one port number: an integer from 1 to 65535.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` (`details.operation` `ports`) otherwise.
pub fn check_port(value: f64, what: &str) -> Result<u16> {
    if value.is_finite() && value.fract() == 0.0 && (1.0..=65535.0).contains(&value) {
        return Ok(value as u16);
    }
    Err(invalid(format!("{what} must be an integer port number from 1 to 65535, got {value}")))
}

/// Checks the declared ports: at most [`MAX_PORTS`], each [`check_port`], no port twice.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` (`details.operation` `ports`) otherwise.
pub fn check_ports(values: &[f64]) -> Result<Vec<u16>> {
    if values.len() > MAX_PORTS {
        return Err(invalid(format!("ports: at most {MAX_PORTS} ports, got {}", values.len())));
    }
    let mut ports = Vec::with_capacity(values.len());
    for (index, value) in values.iter().enumerate() {
        let port = check_port(*value, &format!("ports[{index}]"))?;
        if ports.contains(&port) {
            return Err(invalid(format!("ports: port {port} is declared twice")));
        }
        ports.push(port);
    }
    Ok(ports)
}

/// One route of a Box (the Vercel SDK's `SandboxRoute`): the URL that reaches `port` in the Box.
///
/// Shape (JSON): `{ port: number, subdomain: string, url: string }`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Route {
    /// The Box port.
    pub port: u16,
    /// The provider's subdomain (Vercel: `https://<subdomain>.vercel.run` is the SDK's `domain()`).
    pub subdomain: String,
    /// The URL that reaches the port (the local Box host: its port proxy, with the Box's secret).
    pub url: String,
}

/// Reads the `routes` of a create or get answer.
///
/// # Errors
/// serde's words for what is wrong with a route.
pub fn parse_routes(routes: &[serde_json::Value]) -> std::result::Result<Vec<Route>, String> {
    routes.iter().map(|route| Route::deserialize(route).map_err(|e| format!("routes: {e}"))).collect()
}

/// The URL of `port` among `routes`: the route's `url`.
///
/// # Errors
/// `SANDBOX_INVALID_ARGUMENT` (`details.operation` `ports`) when the port has no route (it was
/// not declared in `ports` at open), naming the declared ones.
pub fn route_url(routes: &[Route], port: u16) -> Result<String> {
    if let Some(route) = routes.iter().find(|route| route.port == port) {
        return Ok(route.url.clone());
    }
    let declared: Vec<String> = routes.iter().map(|route| route.port.to_string()).collect();
    Err(invalid(format!(
        "domain({port}): port {port} was not declared at open (openSandboxSession({{ ports: [{}] }}))",
        declared.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ports_are_distinct_integers_from_1_to_65535_at_most_15() {
        assert_eq!(check_ports(&[3000.0, 8080.0]).unwrap(), vec![3000, 8080]);
        assert_eq!(check_ports(&[]).unwrap(), Vec::<u16>::new());
        for bad in [&[0.0][..], &[65536.0], &[3000.5], &[f64::NAN], &[-1.0], &[3000.0, 3000.0]] {
            let error = check_ports(bad).unwrap_err();
            assert_eq!(error.code(), ErrorCode::InvalidArgument, "{bad:?}");
            assert_eq!(error.operation(), Some(Operation::Ports));
        }
        let many: Vec<f64> = (1..=16).map(f64::from).collect();
        assert!(check_ports(&many).unwrap_err().message().contains("at most 15"));
    }

    #[test]
    fn a_port_url_is_its_route_url_and_an_undeclared_port_is_refused() {
        let routes = parse_routes(&[
            json!({"port": 3000, "subdomain": "sb-1", "url": "https://sb-1.vercel.run"}),
            json!({"port": 8080, "subdomain": "sb-2", "url": "http://127.0.0.1:4000/s"}),
        ])
        .unwrap();
        assert_eq!(route_url(&routes, 3000).unwrap(), "https://sb-1.vercel.run");
        assert_eq!(route_url(&routes, 8080).unwrap(), "http://127.0.0.1:4000/s");
        let error = route_url(&routes, 5173).unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidArgument);
        assert!(error.message().contains("ports: [3000, 8080]"), "{}", error.message());
        assert!(parse_routes(&[json!({"port": 3000})]).unwrap_err().contains("subdomain"));
    }
}
