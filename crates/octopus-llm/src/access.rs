//! Where an agent's model calls may go, and which API key goes with them.
//!
//! Tenants write their agents' settings, the operator writes the server's;
//! the two are trusted differently:
//!
//! - The **provider's own endpoint** (no `base_url`, or one on the default's
//!   scheme, host and port) and the operator's **`allowed_base_urls`** are
//!   trusted: the operator's keys go there (`OPENAI_API_KEY`,
//!   `ANTHROPIC_API_KEY`, `AZURE_OPENAI_API_KEY`, or an `OCTOPUS_LLM_KEY_*`
//!   bound to no tenant), whatever address they resolve to.
//! - Any other `base_url` is **tenant-chosen**: it gets only a key the
//!   operator bound to the agent's tenant (`[llm.tenant_keys]`), or none;
//!   and unless `other_base_urls = "any"`, it must be a public address
//!   (checked after resolution, by the client that connects:
//!   `octopus_provider_http::destinations`).
//!
//! A key bound to tenants is theirs alone: another tenant naming it is
//! refused, wherever its agent points.

use std::collections::{BTreeMap, HashMap, HashSet};

use octopus_core::TenantId;
use octopus_core::agent::{LlmConfig, LlmProvider, is_tenant_key_variable};
use octopus_core::chat::{ChatError, Fault};
use octopus_core::llm_settings::OtherBaseUrls;

use crate::SettingsError;
use reqwest::Url;
use uuid::Uuid;

/// How far the server trusts the place a call goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Destination {
    /// The provider's own endpoint.
    ProviderEndpoint,
    /// A URL among the operator's `allowed_base_urls`.
    OperatorAllowed,
    /// A URL a tenant chose; `public_only` unless the operator allows any.
    TenantChosen { public_only: bool },
}

/// Where a call goes and with which key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Route {
    pub destination: Destination,
    /// The environment variable whose key is sent; `None`: no key.
    pub key_variable: Option<String>,
}

/// A base URL the operator allows: a scheme, host and port compared
/// exactly, and a path the call's must start with, segment by segment.
#[derive(Clone, Debug, PartialEq, Eq)]
struct AllowedBase {
    scheme: String,
    host: String,
    port: Option<u16>,
    segments: Vec<String>,
}

impl AllowedBase {
    fn parse(text: &str) -> Result<Self, SettingsError> {
        let refuse = |why: &str| SettingsError(format!("allowed_base_urls: {text:?} {why}"));
        let url = Url::parse(text).map_err(|e| refuse(&format!("is not a URL: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(refuse("is not an http:// or https:// URL"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(refuse("carries credentials"));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(refuse("has a query or fragment"));
        }
        let host = url
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or_else(|| refuse("has no host"))?;
        Ok(Self {
            scheme: url.scheme().to_owned(),
            host: host.to_owned(),
            port: url.port_or_known_default(),
            segments: segments(&url),
        })
    }

    fn same_origin(&self, url: &Url) -> bool {
        url.scheme() == self.scheme
            && url.host_str() == Some(self.host.as_str())
            && url.port_or_known_default() == self.port
    }

    fn admits(&self, url: &Url) -> bool {
        self.same_origin(url) && segments(url).starts_with(&self.segments)
    }
}

/// A URL's path segments, without empty ones (`/v1/` is `["v1"]`).
fn segments(url: &Url) -> Vec<String> {
    url.path_segments()
        .map(|s| s.filter(|s| !s.is_empty()).map(str::to_owned).collect())
        .unwrap_or_default()
}

/// The rules above, parsed from `[llm]`.
pub(crate) struct ModelAccess {
    allowed: Vec<AllowedBase>,
    other_base_urls: OtherBaseUrls,
    /// Each bound variable, and the tenants it is bound to.
    bound: HashMap<String, HashSet<TenantId>>,
}

/// Checks `[llm] allowed_base_urls` and `[llm.tenant_keys]`: what start
/// refuses with one line.
pub(crate) fn validate(
    allowed_base_urls: &[String],
    tenant_keys: &BTreeMap<Uuid, Vec<String>>,
) -> Result<(), SettingsError> {
    for entry in allowed_base_urls {
        AllowedBase::parse(entry)?;
    }
    for (tenant, variables) in tenant_keys {
        for variable in variables {
            if !is_tenant_key_variable(variable) {
                return Err(SettingsError(format!(
                    "tenant_keys: {tenant}: {variable:?} is not a name starting OCTOPUS_LLM_KEY_ (capitals, digits, underscores); the providers' own variables are the operator's keys"
                )));
            }
        }
    }
    Ok(())
}

impl ModelAccess {
    /// The rules of `[llm]`. Entries that do not parse are left out
    /// ([`validate`] refuses them at start).
    pub(crate) fn new(
        allowed_base_urls: &[String],
        other_base_urls: OtherBaseUrls,
        tenant_keys: &BTreeMap<Uuid, Vec<String>>,
    ) -> Self {
        let mut bound: HashMap<String, HashSet<TenantId>> = HashMap::new();
        for (tenant, variables) in tenant_keys {
            for variable in variables {
                bound
                    .entry(variable.clone())
                    .or_default()
                    .insert(TenantId(*tenant));
            }
        }
        Self {
            allowed: allowed_base_urls
                .iter()
                .filter_map(|entry| AllowedBase::parse(entry).ok())
                .collect(),
            other_base_urls,
            bound,
        }
    }

    /// Where a call of `tenant`'s agent with settings `llm` goes, and with
    /// which key; or why it may not be made (a configuration fault).
    pub(crate) fn route(&self, tenant: TenantId, llm: &LlmConfig) -> Result<Route, ChatError> {
        let refuse = |message: String| refused(llm, message);
        let destination = match &llm.base_url {
            None if crate::default_base_url(llm.provider).is_none() => {
                return Err(refuse("an Azure OpenAI agent needs llm.base_url".into()));
            }
            None => Destination::ProviderEndpoint,
            Some(text) => {
                let url = Url::parse(text)
                    .map_err(|e| refuse(format!("llm.base_url {text} is not a usable URL: {e}")))?;
                self.classify(llm, &url)?
            }
        };
        let key_variable = self.key_variable(tenant, llm, destination)?;
        Ok(Route {
            destination,
            key_variable,
        })
    }

    fn classify(&self, llm: &LlmConfig, url: &Url) -> Result<Destination, ChatError> {
        let provider = llm.provider;
        let own =
            crate::default_base_url(provider).and_then(|default| AllowedBase::parse(default).ok());
        if own.is_some_and(|own| own.same_origin(url)) {
            return Ok(Destination::ProviderEndpoint);
        }
        if self.allowed.iter().any(|allowed| allowed.admits(url)) {
            return Ok(Destination::OperatorAllowed);
        }
        match self.other_base_urls {
            OtherBaseUrls::None => Err(refused(
                llm,
                format!("llm.base_url {url} is not among the server's [llm] allowed_base_urls"),
            )),
            OtherBaseUrls::Any => Ok(Destination::TenantChosen { public_only: false }),
            OtherBaseUrls::Public => {
                octopus_provider_http::destinations::check_literal(url)
                    .map_err(|why| refused(llm, format!("llm.base_url: {why}")))?;
                Ok(Destination::TenantChosen { public_only: true })
            }
        }
    }

    fn key_variable(
        &self,
        tenant: TenantId,
        llm: &LlmConfig,
        destination: Destination,
    ) -> Result<Option<String>, ChatError> {
        let refuse = |message: String| refused(llm, message);
        let tenant_chosen = matches!(destination, Destination::TenantChosen { .. });
        let Some(variable) = llm.api_key_env.as_deref() else {
            // The operator's key only where the operator trusts; a tenant's
            // own endpoint is called without one.
            return Ok(if tenant_chosen {
                None
            } else {
                crate::default_key_variable(llm.provider).map(str::to_owned)
            });
        };
        match self.bound.get(variable) {
            Some(tenants) if tenants.contains(&tenant) => Ok(Some(variable.to_owned())),
            Some(_) => Err(refuse(format!(
                "llm.api_key_env {variable} is not a key of this tenant"
            ))),
            None if tenant_chosen => Err(refuse(format!(
                "llm.api_key_env {variable} is a key of the server's, sent only to the provider's own endpoint and the server's [llm] allowed_base_urls; llm.base_url {} is neither. Name a key the operator bound to this tenant ([llm.tenant_keys])",
                llm.base_url.as_deref().unwrap_or_default()
            ))),
            None => {
                let providers_own = [
                    LlmProvider::Openai,
                    LlmProvider::AzureOpenai,
                    LlmProvider::Anthropic,
                ]
                .into_iter()
                .find(|p| crate::default_key_variable(*p) == Some(variable));
                match providers_own {
                    Some(owner) if owner != llm.provider => Err(refuse(format!(
                        "llm.api_key_env {variable} is the key of {}, not of {}",
                        owner.as_str(),
                        llm.provider.as_str()
                    ))),
                    _ => Ok(Some(variable.to_owned())),
                }
            }
        }
    }
}

/// A call the rules refuse: the operator's configuration, or the agent's.
fn refused(llm: &LlmConfig, message: String) -> ChatError {
    ChatError::new(llm.provider.as_str(), Fault::Configuration, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACME: Uuid = Uuid::from_u128(1);
    const GLOBEX: Uuid = Uuid::from_u128(2);

    fn access(allowed: &[&str], other: OtherBaseUrls) -> ModelAccess {
        let mut keys = BTreeMap::new();
        keys.insert(ACME, vec!["OCTOPUS_LLM_KEY_ACME".to_owned()]);
        keys.insert(GLOBEX, vec!["OCTOPUS_LLM_KEY_GLOBEX".to_owned()]);
        let allowed: Vec<String> = allowed.iter().map(|s| (*s).to_owned()).collect();
        validate(&allowed, &keys).unwrap();
        ModelAccess::new(&allowed, other, &keys)
    }

    fn llm(provider: LlmProvider, base_url: Option<&str>, key: Option<&str>) -> LlmConfig {
        LlmConfig {
            provider,
            model: "m".into(),
            temperature: None,
            top_p: None,
            max_output_tokens: None,
            base_url: base_url.map(str::to_owned),
            deployment: Some("d".into()),
            api_version: None,
            summary_model: None,
            api_key_env: key.map(str::to_owned),
        }
    }

    fn route(
        access: &ModelAccess,
        provider: LlmProvider,
        base_url: Option<&str>,
        key: Option<&str>,
    ) -> Result<Route, String> {
        access
            .route(TenantId(ACME), &llm(provider, base_url, key))
            .map_err(|e| e.message)
    }

    #[test]
    fn the_operators_key_goes_to_the_providers_endpoint() {
        let access = access(&[], OtherBaseUrls::Public);
        for (provider, base_url, variable) in [
            (LlmProvider::Openai, None, "OPENAI_API_KEY"),
            (
                LlmProvider::Openai,
                Some("https://api.openai.com/v1/"),
                "OPENAI_API_KEY",
            ),
            (
                LlmProvider::Openai,
                Some("https://API.openai.com:443/v1"),
                "OPENAI_API_KEY",
            ),
            (LlmProvider::Anthropic, None, "ANTHROPIC_API_KEY"),
        ] {
            let route = route(&access, provider, base_url, None).unwrap();
            assert_eq!(route.destination, Destination::ProviderEndpoint);
            assert_eq!(route.key_variable.as_deref(), Some(variable));
        }
        let ollama = route(
            &access,
            LlmProvider::Ollama,
            Some("http://localhost:11434"),
            None,
        )
        .unwrap();
        assert_eq!(ollama.destination, Destination::ProviderEndpoint);
        assert_eq!(ollama.key_variable, None);
    }

    #[test]
    fn a_tenant_chosen_url_gets_no_operator_key() {
        let access = access(&[], OtherBaseUrls::Public);
        for provider in [
            LlmProvider::Openai,
            LlmProvider::Anthropic,
            LlmProvider::AzureOpenai,
        ] {
            let route = route(&access, provider, Some("https://llm.example.com/v1"), None).unwrap();
            assert_eq!(
                route.destination,
                Destination::TenantChosen { public_only: true }
            );
            assert_eq!(route.key_variable, None, "{provider:?}");
        }
        for named in ["OPENAI_API_KEY", "OCTOPUS_LLM_KEY_SHARED"] {
            let error = route(
                &access,
                LlmProvider::Openai,
                Some("https://llm.example.com/v1"),
                Some(named),
            )
            .unwrap_err();
            assert!(error.contains("allowed_base_urls"), "{error}");
        }
        // Look-alikes of the provider's host are other hosts.
        for lookalike in [
            "https://api.openai.com.evil.example/v1",
            "http://api.openai.com/v1",
            "https://api.openai.com:8443/v1",
        ] {
            let route = route(&access, LlmProvider::Openai, Some(lookalike), None).unwrap();
            assert!(
                matches!(route.destination, Destination::TenantChosen { .. }),
                "{lookalike}"
            );
            assert_eq!(route.key_variable, None);
        }
    }

    #[test]
    fn allowed_urls_match_scheme_host_and_port_exactly_and_the_path_by_segments() {
        let access = access(
            &["http://127.0.0.1", "https://gateway.example.com/openai"],
            OtherBaseUrls::None,
        );
        let allowed = |url: &str| route(&access, LlmProvider::Openai, Some(url), None);
        assert_eq!(
            allowed("http://127.0.0.1:80/v1")
                .unwrap()
                .key_variable
                .as_deref(),
            Some("OPENAI_API_KEY")
        );
        assert_eq!(
            allowed("https://gateway.example.com/openai/v1")
                .unwrap()
                .destination,
            Destination::OperatorAllowed
        );
        for refused in [
            "http://127.0.0.10:7833",
            "http://127.0.0.1:8080",
            "https://127.0.0.1",
            "https://gateway.example.com/openai-other",
            "https://gateway.example.com/",
            "https://gateway.example.com.evil.example/openai",
        ] {
            let error = allowed(refused).unwrap_err();
            assert!(error.contains("allowed_base_urls"), "{refused}: {error}");
        }
    }

    #[test]
    fn internal_addresses_are_refused_unless_the_operator_allows_them() {
        let public = access(&[], OtherBaseUrls::Public);
        for url in [
            "http://127.0.0.1:7833",
            "http://169.254.169.254/latest",
            "http://10.0.0.5:8000/v1",
            "http://2130706433:80/",
        ] {
            let error = route(&public, LlmProvider::Openai, Some(url), None).unwrap_err();
            assert!(
                error.contains("not reachable from this server"),
                "{url}: {error}"
            );
        }
        let any = access(&[], OtherBaseUrls::Any);
        let route = route(
            &any,
            LlmProvider::Openai,
            Some("http://10.0.0.5:8000/v1"),
            None,
        )
        .unwrap();
        assert_eq!(
            route,
            Route {
                destination: Destination::TenantChosen { public_only: false },
                key_variable: None
            },
            "reachable, but still without the operator's key"
        );
    }

    #[test]
    fn a_key_bound_to_a_tenant_is_that_tenants_alone() {
        let access = access(&[], OtherBaseUrls::Public);
        let own = route(
            &access,
            LlmProvider::Openai,
            Some("https://llm.example.com/v1"),
            Some("OCTOPUS_LLM_KEY_ACME"),
        )
        .unwrap();
        assert_eq!(own.key_variable.as_deref(), Some("OCTOPUS_LLM_KEY_ACME"));
        for base_url in [None, Some("https://llm.example.com/v1")] {
            let error = route(
                &access,
                LlmProvider::Openai,
                base_url,
                Some("OCTOPUS_LLM_KEY_GLOBEX"),
            )
            .unwrap_err();
            assert!(error.contains("not a key of this tenant"), "{error}");
        }
    }

    #[test]
    fn one_providers_key_never_goes_to_another() {
        let access = access(&[], OtherBaseUrls::Public);
        let error = route(
            &access,
            LlmProvider::Anthropic,
            None,
            Some("OPENAI_API_KEY"),
        )
        .unwrap_err();
        assert!(error.contains("the key of openai"), "{error}");
        let shared = route(
            &access,
            LlmProvider::Anthropic,
            None,
            Some("OCTOPUS_LLM_KEY_SHARED"),
        )
        .unwrap();
        assert_eq!(
            shared.key_variable.as_deref(),
            Some("OCTOPUS_LLM_KEY_SHARED")
        );
    }

    #[test]
    fn azure_needs_an_allowed_url_for_the_operators_key() {
        let access = access(&["https://acme.openai.azure.com"], OtherBaseUrls::Public);
        let allowed = route(
            &access,
            LlmProvider::AzureOpenai,
            Some("https://acme.openai.azure.com/"),
            None,
        )
        .unwrap();
        assert_eq!(
            allowed.key_variable.as_deref(),
            Some("AZURE_OPENAI_API_KEY")
        );
        let other = route(
            &access,
            LlmProvider::AzureOpenai,
            Some("https://evil.openai.azure.com/"),
            None,
        )
        .unwrap();
        assert_eq!(other.key_variable, None);
        assert!(route(&access, LlmProvider::AzureOpenai, None, None).is_err());
    }

    #[test]
    fn start_refuses_unusable_settings() {
        let none = BTreeMap::new();
        for entry in [
            "not a url",
            "ftp://x",
            "http://user:pw@x",
            "http://x/?q=1",
            "http://",
        ] {
            assert!(validate(&[entry.to_owned()], &none).is_err(), "{entry}");
        }
        let mut keys = BTreeMap::new();
        keys.insert(ACME, vec!["OPENAI_API_KEY".to_owned()]);
        assert!(validate(&[], &keys).is_err());
    }
}
