//! The wire contract between the Vantage coordinator and its agents.
//!
//! The protobuf source lives in `vantage/v1/fleet.proto`. The gRPC code generation and the
//! stream itself arrive with the fleet work; until then this crate only carries the contract
//! text so that both sides can be reviewed against it.

/// The protobuf source of `vantage.v1`.
pub const FLEET_PROTO: &str = include_str!("../vantage/v1/fleet.proto");

#[cfg(test)]
mod tests {
    #[test]
    fn proto_declares_versioned_package() {
        assert!(super::FLEET_PROTO.contains("package vantage.v1;"));
    }
}
