//! Generate the gRPC code from `vantage/v1/fleet.proto` with protox (a protobuf compiler in
//! Rust), so that no `protoc` binary is needed on any machine.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=vantage/v1/fleet.proto");
    let fds = protox::compile(["vantage/v1/fleet.proto"], ["."])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
