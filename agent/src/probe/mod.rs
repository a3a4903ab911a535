//! The stages of a probe, one module per stage, plus the HTTP exchange they share.

pub mod auth;
pub mod connect;
mod connect_verdict;
pub mod dns;
pub(crate) mod dns_query;
pub mod era;
pub mod error_body;
pub mod http;
pub mod http_error;
pub mod listing;
pub mod observed;
pub mod origin_paths;
pub mod reason;
pub mod redirect;
pub mod request;
pub mod sse;
#[cfg(test)]
pub(crate) mod test_support;
pub mod tls;
pub mod tls_chain;
pub mod transport;
pub mod transport_reason;
pub mod verdict;
