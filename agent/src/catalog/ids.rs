//! Closed sets of stable string ids (check ids, finding ids): an enum per set, its members in
//! catalogue order, the string each one travels as (reports, the wire, metrics labels), and
//! a parser that refuses what it does not know. A typo in code is a compile error; an
//! unknown id from outside is an error that names it.

/// An id from outside that no catalogue entry carries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{id}`; `vantage explain --table` lists every id")]
pub struct UnknownId {
    /// `check id` or `finding id`.
    pub what: &'static str,
    pub id: String,
}

/// Declare an id enum: `Variant = "dotted.id"` in catalogue order (the derived `Ord` is that
/// order), or, for finding ids, first `checks [Variant, …]`: findings that carry the id of
/// the check of the same name, whose string is declared once, by the check. Ids serialise as
/// their strings.
macro_rules! string_ids {
    ($(#[$meta:meta])* $name:ident, $what:literal {
        checks [$($shared:ident),* $(,)?],
        $($variant:ident = $id:literal,)*
    }) => {
        string_ids!(@define $(#[$meta])* $name, $what, [
            $($shared => $crate::catalog::CheckId::$shared.as_str(),)*
            $($variant => $id,)*
        ]);
    };
    ($(#[$meta:meta])* $name:ident, $what:literal { $($variant:ident = $id:literal,)* }) => {
        string_ids!(@define $(#[$meta])* $name, $what, [$($variant => $id,)*]);
    };
    (@define $(#[$meta:meta])* $name:ident, $what:literal, [$($variant:ident => $id:expr,)*]) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($variant,)*
        }

        impl $name {
            /// Every member, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The stable string id.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $id,)*
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = $crate::catalog::UnknownId;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::ALL
                    .iter()
                    .copied()
                    .find(|v| v.as_str() == s)
                    .ok_or_else(|| $crate::catalog::UnknownId { what: $what, id: s.to_string() })
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                self.as_str()
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

pub(crate) use string_ids;

/// `spec_table! { pub fn entry(IdType) -> SpecType { Variant => { field: value, … } … } }`:
/// a catalogue as one exhaustive match, so that a new id cannot lack its entry. The values
/// are constants (the entries are `'static`).
#[macro_export]
macro_rules! spec_table {
    ($(#[$meta:meta])* $vis:vis fn $fn:ident($ty:ident) -> $spec:ident {
        $($id:ident => { $($field:ident: $value:expr,)* })*
    }) => {
        $(#[$meta])*
        $vis fn $fn(id: $ty) -> &'static $spec {
            match id {
                $($ty::$id => &$spec { $($field: $value,)* },)*
            }
        }
    };
}
