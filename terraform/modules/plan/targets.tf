# Each check's target as the coordinator compares [[checks]] targets (it refuses one that
# appears twice, and the pod would crash-loop): the URL as the coordinator shows it, i.e. as
# the `url` crate serialises it with credential values hidden. The chart does the same
# (charts/vantage/templates/_helpers.tpl, vantage.targetKey); charts/tests/run.py checks
# both against `vantage serve --check`. Scheme and host in lower case, the default port
# (and a port's leading zeros) dropped, an empty path as /, \ as /, . and .. path segments
# resolved, the value of a query parameter whose name looks like a credential hidden. A
# trailing slash is kept: the coordinator schedules /mcp and /mcp/ as two targets.

locals {
  target_url_re = "^([a-zA-Z][a-zA-Z0-9+.-]*)://([^/?#\\\\]*)([^?#]*)(\\?[^#]*)?(#.*)?$"
  target_hp_re  = "^(\\[[^\\]]*\\]|[^:]*)(?::([0-9]*))?$"
  # A folded parameter name (letters and digits, lower case) ending so carries a credential.
  target_secret_re = "(key|token|secret|password|passwd|pwd|signature|sig|credentials?|session|sessionid|auth|authorization|bearer|jwt|code)$"

  target_parts = {
    for t in distinct([for c in var.checks : c.target]) : t => try(regex(local.target_url_re, trimspace(t)), null)
  }
  target_head = {
    for t, m in local.target_parts : t => m == null ? null : {
      scheme = lower(m[0])
      host   = try(regex(local.target_hp_re, lower(m[1]))[0], lower(m[1]))
      port   = replace(try(coalesce(regex(local.target_hp_re, m[1])[1]), ""), "/^0+([0-9])/", "$1")
      path   = startswith(replace(m[2], "\\", "/"), "/") ? replace(m[2], "\\", "/") : "/${replace(m[2], "\\", "/")}"
      query  = m[3] == null ? null : trimprefix(m[3], "?")
    }
  }
  # . and .. resolved by rewriting, eight rounds (as the chart does).
  target_path_0 = { for t, h in local.target_head : t => h == null ? "" : h.path }
  target_path_1 = { for t, p in local.target_path_0 : t => replace(replace(replace(replace(replace(replace(p, "/(?i)/(\\.|%2e)(/|$)/", "/"), "/(?i)^/(\\.|%2e){2}(/|$)/", "/"), "/(?i)/[^/]*/(\\.|%2e){2}(/|$)/", "/"), "/(?i)/(\\.|%2e)(/|$)/", "/"), "/(?i)^/(\\.|%2e){2}(/|$)/", "/"), "/(?i)/[^/]*/(\\.|%2e){2}(/|$)/", "/") }
  target_path_2 = { for t, p in local.target_path_1 : t => replace(replace(replace(replace(replace(replace(p, "/(?i)/(\\.|%2e)(/|$)/", "/"), "/(?i)^/(\\.|%2e){2}(/|$)/", "/"), "/(?i)/[^/]*/(\\.|%2e){2}(/|$)/", "/"), "/(?i)/(\\.|%2e)(/|$)/", "/"), "/(?i)^/(\\.|%2e){2}(/|$)/", "/"), "/(?i)/[^/]*/(\\.|%2e){2}(/|$)/", "/") }
  target_path_3 = { for t, p in local.target_path_2 : t => replace(replace(replace(replace(replace(replace(p, "/(?i)/(\\.|%2e)(/|$)/", "/"), "/(?i)^/(\\.|%2e){2}(/|$)/", "/"), "/(?i)/[^/]*/(\\.|%2e){2}(/|$)/", "/"), "/(?i)/(\\.|%2e)(/|$)/", "/"), "/(?i)^/(\\.|%2e){2}(/|$)/", "/"), "/(?i)/[^/]*/(\\.|%2e){2}(/|$)/", "/") }
  target_path_4 = { for t, p in local.target_path_3 : t => replace(replace(replace(replace(replace(replace(p, "/(?i)/(\\.|%2e)(/|$)/", "/"), "/(?i)^/(\\.|%2e){2}(/|$)/", "/"), "/(?i)/[^/]*/(\\.|%2e){2}(/|$)/", "/"), "/(?i)/(\\.|%2e)(/|$)/", "/"), "/(?i)^/(\\.|%2e){2}(/|$)/", "/"), "/(?i)/[^/]*/(\\.|%2e){2}(/|$)/", "/") }
  target_query = {
    for t, h in local.target_head : t => h == null || try(h.query == null, true) ? "" : join("", [
      for piece in regexall("[^&;]*[&;]?", h.query) : (
        strcontains(trimsuffix(piece, try(regex("[&;]$", piece), "")), "=") &&
        can(regex(local.target_secret_re, lower(replace(split("=", piece)[0], "/%[0-9a-fA-F]{2}|[^\\p{L}\\p{N}]/", ""))))
        ? "${split("=", piece)[0]}=[redacted]${try(regex("[&;]$", piece), "")}"
        : piece
      )
    ])
  }
  target_key = {
    for t, h in local.target_head : t => h == null ? trimspace(t) : join("", [
      h.scheme, "://", h.host,
      (h.scheme == "https" && h.port == "443") || (h.scheme == "http" && h.port == "80") || h.port == "" ? "" : ":${h.port}",
      local.target_path_4[t],
      h.query == null ? "" : "?${local.target_query[t]}",
    ])
  }

  # The first earlier entry each check's target equals as the coordinator compares them.
  target_first = [
    for j, c in var.checks : try([for i in range(j) : i if local.target_key[var.checks[i].target] == local.target_key[c.target]][0], null)
  ]
  # "checks[j] (target) is checks[i] (target)" for each entry the coordinator would refuse
  # as appearing twice.
  targets_twice = [
    for j, c in var.checks : format("checks[%d] (%s) is checks[%d] (%s)%s", j, c.target, local.target_first[j], var.checks[local.target_first[j]].target,
    c.target == var.checks[local.target_first[j]].target ? "" : format(", both %s", local.target_key[c.target]))
    if local.target_first[j] != null
  ]
}
