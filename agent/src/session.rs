//! How a session with the coordinator ends: an error (refused, the stream failed, the dial
//! failed) or not (closed, asked to reconnect, stopped); the client retries after each,
//! slowly after a refusal.

use tonic::Code;

use crate::dial::{
    answered_in_tls, not_grpc_hint, plain_dial_answered_in_tls, AnsweredInTls, DialError,
};

/// Why a session ended. Each variant keeps what it is about (the coordinator's gRPC status,
/// the header error, the dial error) as its typed source; the message is the one the agent
/// logs and shows on /readyz, printed with `Display` alone (the status's own text is part of
/// it, so a chain printer would repeat it).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The coordinator refused this agent (unauthenticated, or permission denied).
    #[error("the coordinator refused this agent ({}); check the agent token and region", .status.message())]
    Refused {
        #[source]
        status: tonic::Status,
    },
    /// The agent token cannot travel as a header value: refused before anything is sent.
    #[error("the coordinator refused this agent ({TOKEN_NOT_A_HEADER}); check the agent token and region")]
    TokenNotAHeader {
        #[source]
        source: tonic::metadata::errors::InvalidMetadataValue,
    },
    /// Opening the stream failed for another reason than a refusal.
    #[error("attach: {}{}", .status.message(), wrong_port_hint(.status))]
    Attach {
        #[source]
        status: tonic::Status,
    },
    /// The stream failed: before the coordinator confirmed the registration (`confirmed`
    /// false: perhaps not a coordinator at all), or after (the connection broke).
    #[error("{}", stream_message(.status, *.confirmed))]
    Stream {
        #[source]
        status: tonic::Status,
        confirmed: bool,
    },
    /// The coordinator's first message was not the registration's confirmation.
    #[error("the coordinator did not confirm the registration")]
    Unconfirmed,
    #[error(transparent)]
    Dial(#[from] DialError),
}

const TOKEN_NOT_A_HEADER: &str = "the token is not a valid header value";

impl SessionError {
    /// Why the coordinator refused this agent, when it did (a refusal is retried slowly).
    pub fn refusal(&self) -> Option<&str> {
        match self {
            SessionError::Refused { status } => Some(status.message()),
            SessionError::TokenNotAHeader { .. } => Some(TOKEN_NOT_A_HEADER),
            _ => None,
        }
    }
}

/// `; ` and the wrong-port hint, when the answer was not gRPC; empty otherwise. An answer in
/// TLS to a plain `http://` dial (in the status, or seen by the dialer on this session's
/// connection: `plain_dial_answered_in_tls`) is named as that instead, once.
fn wrong_port_hint(status: &tonic::Status) -> String {
    if answered_in_tls(status) || plain_dial_answered_in_tls() {
        return if status.message().contains("answered in TLS") {
            String::new()
        } else {
            format!("; {AnsweredInTls}")
        };
    }
    not_grpc_hint(status.message())
        .map(|h| format!("; {h}"))
        .unwrap_or_default()
}

/// A failed stream, said the way the agent logs it. After the registration was confirmed, a
/// status with a transport error behind it means the connection broke (its root cause is
/// named unless the status already says it); without one, the coordinator ended the stream
/// with it. Before, the peer may not be a coordinator at all: the wrong-port hint.
fn stream_message(status: &tonic::Status, confirmed: bool) -> String {
    if !confirmed {
        return format!("stream: {}{}", status.message(), wrong_port_hint(status));
    }
    let mut root = None;
    let mut source = std::error::Error::source(status);
    while let Some(e) = source {
        root = Some(e.to_string());
        source = e.source();
    }
    match root {
        Some(root) if !status.message().contains(root.as_str()) => format!(
            "stream: {} ({root}); the connection to the coordinator broke",
            status.message()
        ),
        Some(_) => format!(
            "stream: {}; the connection to the coordinator broke",
            status.message()
        ),
        None => format!("stream: {}", status.message()),
    }
}

/// How a session ended without an error.
#[derive(Debug)]
pub(crate) enum Ended {
    /// The coordinator closed the stream.
    Closed,
    /// The coordinator is going away and asked agents to reconnect now, with its reason
    /// (free text from the coordinator, logged as it came).
    Reconnect { reason: String },
    /// This agent was told to stop.
    Stopped,
}

/// Why the stream failed: a refusal, or the stream broke (see [`SessionError::Stream`]).
pub(crate) fn classify(status: tonic::Status, confirmed: bool) -> SessionError {
    match status.code() {
        Code::Unauthenticated | Code::PermissionDenied => SessionError::Refused { status },
        _ => SessionError::Stream { status, confirmed },
    }
}

#[cfg(test)]
mod tests {
    use tonic::Status;

    use super::*;

    /// The messages the agent logs and shows on /readyz are the ones it always printed;
    /// the status behind each is its typed source.
    #[test]
    fn each_ending_says_what_it_always_said_and_keeps_its_status() {
        let refused = classify(Status::permission_denied("token withdrawn"), true);
        assert_eq!(
            refused.to_string(),
            "the coordinator refused this agent (token withdrawn); check the agent token and region"
        );
        assert_eq!(refused.refusal(), Some("token withdrawn"));
        let source = std::error::Error::source(&refused).and_then(|s| s.downcast_ref::<Status>());
        assert_eq!(source.map(Status::code), Some(Code::PermissionDenied));

        let header = "bad\nvalue"
            .parse::<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>()
            .unwrap_err();
        let token = SessionError::TokenNotAHeader { source: header };
        assert_eq!(
            token.to_string(),
            "the coordinator refused this agent (the token is not a valid header value); check the agent token and region"
        );
        assert_eq!(
            token.refusal(),
            Some("the token is not a valid header value")
        );

        let attach = SessionError::Attach {
            status: Status::unknown("h2 protocol error: frame with invalid size"),
        };
        assert!(
            attach.to_string().starts_with(
                "attach: h2 protocol error: frame with invalid size; this does not look like the coordinator's gRPC port"
            ),
            "{attach}"
        );
        assert_eq!(attach.refusal(), None);
        let attach = SessionError::Attach {
            status: Status::unavailable("connection refused"),
        };
        assert_eq!(attach.to_string(), "attach: connection refused");

        // Before the registration was confirmed: the wrong-port hint; after it, a status
        // without a transport error behind it is the coordinator ending the stream.
        let early = classify(Status::internal("invalid compression flag: 60"), false);
        assert!(
            early.to_string().starts_with(
                "stream: invalid compression flag: 60; this does not look like the coordinator's gRPC port"
            ),
            "{early}"
        );
        let ended = classify(
            Status::unavailable("the coordinator is shutting down"),
            true,
        );
        assert_eq!(
            ended.to_string(),
            "stream: the coordinator is shutting down"
        );
        assert!(matches!(
            ended,
            SessionError::Stream {
                confirmed: true,
                ..
            }
        ));
        assert_eq!(ended.refusal(), None);

        assert_eq!(
            SessionError::Unconfirmed.to_string(),
            "the coordinator did not confirm the registration"
        );
    }
}
