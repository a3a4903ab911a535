//! The wire contract between the Vantage coordinator and its agents (`vantage.v1`): the
//! protobuf source in `vantage/v1/fleet.proto` and the code generated from it at build time
//! (with protox, so no `protoc` is needed). No logic lives here.

#![allow(missing_debug_implementations, clippy::unwrap_used)]

/// `vantage.v1`.
// Generated oneofs hold messages inline; a result is larger than a heartbeat by design.
#[allow(clippy::large_enum_variant)]
pub mod v1 {
    tonic::include_proto!("vantage.v1");
}

/// The protobuf source of `vantage.v1`.
pub const FLEET_PROTO: &str = include_str!("../vantage/v1/fleet.proto");

#[cfg(test)]
mod tests {
    #[test]
    fn proto_declares_versioned_package() {
        assert!(super::FLEET_PROTO.contains("package vantage.v1;"));
    }
}
