//! Names a copied dump may not take: a tenant importing a copy of its own
//! dump (or another's) already has agents, and shared procedures, of the
//! names the dump uses. Rather than refuse the copy, each taken name becomes
//! "name (copy)", then "name (copy 2)", and the answer says which.

use std::collections::{BTreeMap, HashSet};

use octopus_core::TenantId;
use octopus_core::dump::DumpRecord;
use octopus_core::page::Page;
use octopus_core::procedure::ProcedureFilter;

use crate::error::Result;
use crate::octopus::Octopus;

/// The names in use, and the renames made so far.
#[derive(Default)]
pub(super) struct ImportNames {
    agents: HashSet<String>,
    shared_procedures: HashSet<String>,
    pub renamed_agents: BTreeMap<String, String>,
    pub renamed_procedures: BTreeMap<String, String>,
}

impl ImportNames {
    /// The names the tenant's agents and shared procedures hold now.
    pub async fn of(octopus: &Octopus, tenant: TenantId) -> Result<Self> {
        let agents = octopus.all_agents(tenant).await?;
        let mut shared_procedures = HashSet::new();
        let mut page = Page {
            limit: Page::MAX_LIMIT,
            offset: 0,
        };
        loop {
            let filter = ProcedureFilter {
                shared: Some(true),
                page,
                ..ProcedureFilter::default()
            };
            let found = octopus.store.list_procedures(tenant, &filter).await?;
            let last = found.len() < page.limit as usize;
            shared_procedures.extend(found.into_iter().map(|p| p.name));
            if last {
                break;
            }
            page.offset += page.limit;
        }
        Ok(Self {
            agents: agents.into_iter().map(|a| a.name).collect(),
            shared_procedures,
            ..Self::default()
        })
    }

    /// The record, under a name of its own when its name is taken.
    pub fn rename(&mut self, record: DumpRecord) -> DumpRecord {
        match record {
            DumpRecord::Agent(mut agent) => {
                let name = free_name(&self.agents, &agent.name);
                if name != agent.name {
                    self.renamed_agents.insert(agent.name.clone(), name.clone());
                }
                self.agents.insert(name.clone());
                agent.name = name;
                DumpRecord::Agent(agent)
            }
            DumpRecord::Procedure(mut dumped) if dumped.procedure.agent_id.is_none() => {
                let old = dumped.procedure.name.clone();
                let name = free_name(&self.shared_procedures, &old);
                if name != old {
                    for version in &mut dumped.versions {
                        if version.version.name == old {
                            version.version.name.clone_from(&name);
                        }
                    }
                    self.renamed_procedures.insert(old, name.clone());
                }
                self.shared_procedures.insert(name.clone());
                dumped.procedure.name = name;
                DumpRecord::Procedure(dumped)
            }
            other => other,
        }
    }
}

/// `name`, or the first of "name (copy)", "name (copy 2)", … not in `taken`.
fn free_name(taken: &HashSet<String>, name: &str) -> String {
    if !taken.contains(name) {
        return name.to_owned();
    }
    (1..)
        .map(|n| match n {
            1 => format!("{name} (copy)"),
            n => format!("{name} (copy {n})"),
        })
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::free_name;
    use std::collections::HashSet;

    #[test]
    fn a_taken_name_becomes_the_first_free_copy() {
        let taken: HashSet<String> = ["support", "support (copy)"].map(String::from).into();
        assert_eq!(free_name(&taken, "sales"), "sales");
        assert_eq!(free_name(&taken, "support"), "support (copy 2)");
    }
}
