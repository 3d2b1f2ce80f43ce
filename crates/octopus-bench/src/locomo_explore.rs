//! Throwaway ablation harness for issue 4 (removed in the next commit): the
//! same LoCoMo turns and questions, retrieval methods compared offline.
//! `cargo run --release -p octopus-bench -- explore`
use std::collections::HashMap;

use octopus_core::conversation::{ConversationImport, ImportedSession};
use octopus_core::message::{NewMessage, Role};
use octopus_core::search::{MessageSearchQuery, topic_terms};
use octopus_core::store::MessageSearch;
use octopus_sqlite::{SqliteOptions, SqliteStore};
use octopus_embed::local::LocalEmbedder;
use octopus_engine::{EngineConfig, Octopus};

use crate::locomo::{self, evidence_recall};
use crate::setup;

#[derive(clap::Args)]
pub struct Options {
    #[arg(long, default_value = "../shared/data/locomo-dev")]
    data: PathBuf,
}
use std::path::PathBuf;

fn said(t: &locomo::Turn) -> String {
    match &t.image_caption {
        Some(c) => format!("{}: {} [shared an image: {c}]", t.speaker, t.text),
        None => format!("{}: {}", t.speaker, t.text),
    }
}

const STOP: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "because", "been", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had",
    "has", "have", "he", "her", "him", "his", "how", "i", "if", "in", "is", "it", "its", "just",
    "me", "my", "no", "not", "of", "on", "or", "our", "she", "so", "than", "that", "the", "their",
    "them", "then", "there", "they", "this", "to", "too", "us", "was", "we", "were", "what",
    "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
];
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

struct Q {
    cat: u8,
    evidence: Vec<String>,
    /// keyword hits: (dia, score)
    kw: Vec<(String, f64)>,
    kws: Vec<(String, f64)>,
    qv: Vec<f32>,
    conv: usize,
}

pub fn run(options: Options) -> anyhow::Result<()> {
    let convs = locomo::load(&options.data)?;
    let model = LocalEmbedder::load(&octopus_embed::model_dir::default_model_dir())?;
    let rt = tokio::runtime::Runtime::new()?;
    // turns per conversation: (dia, session index, text variants)
    let mut turns: Vec<Vec<(String, usize, usize)>> = Vec::new();
    let mut variants: Vec<HashMap<&str, Vec<Vec<f32>>>> = Vec::new();
    for c in &convs {
        let mut list = Vec::new();
        let mut plain = Vec::new();
        let mut prev1 = Vec::new();
        let mut dated = Vec::new();
        for (s, session) in c.sessions.iter().enumerate() {
            let date = session.at.format("%-d %B %Y").to_string();
            for (i, t) in session.turns.iter().enumerate() {
                list.push((t.dia_id.clone(), s, i));
                plain.push(said(t));
                dated.push(format!("[{date}] {}", said(t)));
                prev1.push(match i {
                    0 => said(t),
                    _ => format!("{}\n{}", said(&session.turns[i - 1]), said(t)),
                });
            }
        }
        let mut map = HashMap::new();
        for (name, texts) in [("plain", plain), ("prev1", prev1), ("dated", dated)] {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            map.insert(name, model.embed_blocking(&refs)?);
        }
        turns.push(list);
        variants.push(map);
        eprintln!("embedded conversation {}", c.id);
    }
    // Session "summary" vectors: mean of plain turn vectors per session.
    let qs: Vec<Q> = rt.block_on(async {
        let dir = tempfile::tempdir()?;
        let config = EngineConfig {
            data_dir: dir.path().to_owned(),
            ..EngineConfig::default()
        };
        let octopus = Octopus::open(&config)?;
        let tenant = octopus.create_tenant("x").await?;
        let store = SqliteStore::open(SqliteOptions::new(dir.path()))?;
        let mut qs = Vec::new();
        for (ci, c) in convs.iter().enumerate() {
            let agent = setup::agent(&octopus, tenant.id, &format!("a{ci}")).await?;
            let sessions = c
                .sessions
                .iter()
                .map(|s| ImportedSession {
                    messages: s
                        .turns
                        .iter()
                        .enumerate()
                        .map(|(i, t)| NewMessage {
                            timestamp: Some(s.at + chrono::Duration::seconds(i as i64)),
                            ..NewMessage::text(
                                if t.speaker == c.speaker_a {
                                    Role::User
                                } else {
                                    Role::Assistant
                                },
                                said(t),
                            )
                        })
                        .collect(),
                })
                .collect();
            let report = octopus
                .import_conversation(
                    tenant.id,
                    ConversationImport {
                        agent_id: agent.id,
                        user_id: c.speaker_a.clone(),
                        title: None,
                        metadata: Default::default(),
                        sessions,
                    },
                )
                .await?;
            let mut dia = HashMap::new();
            for (e, s) in report.episodes.iter().zip(&c.sessions) {
                for (o, t) in s.turns.iter().enumerate() {
                    dia.insert((*e, o as u32), t.dia_id.clone());
                }
            }
            let questions: Vec<_> = c
                .questions
                .iter()
                .filter(|q| (1..=4).contains(&q.category))
                .collect();
            let texts: Vec<&str> = questions.iter().map(|q| q.question.as_str()).collect();
            let qvs = model.embed_blocking(&texts)?;
            for (q, qv) in questions.into_iter().zip(qvs) {
                // Raw BM25 from the store, untouched by the engine's ranking.
                let bm25 = |text: String| {
                    let store = &store;
                    let dia = &dia;
                    let user = c.speaker_a.clone();
                    async move {
                        let query = MessageSearchQuery { text, agent_id: Some(agent.id), user_id: Some(user), conversation_id: None, from: None, to: None, limit: 200 };
                        let hits = store.search_messages(tenant.id, &query).await?;
                        anyhow::Ok(hits.iter().filter_map(|h| Some((dia.get(&(h.message.episode_id, h.message.ordinal))?.clone(), h.score))).collect::<Vec<_>>())
                    }
                };
                let kw = bm25(q.question.clone()).await?;
                let kws = bm25(topic_terms(&q.question).join(" ")).await?;
                qs.push(Q {
                    cat: q.category,
                    evidence: q.evidence.clone(),
                    kw,
                    kws,
                    qv,
                    conv: ci,
                });
            }
        }
        anyhow::Ok(qs)
    })?;

    let report = |name: &str, rank: &dyn Fn(&Q) -> Vec<String>| {
        let mut sums = [0.0; 4];
        let mut n = 0.0;
        let mut cats: HashMap<u8, (f64, f64)> = HashMap::new();
        for q in &qs {
            if q.evidence.is_empty() {
                continue;
            }
            let r = rank(q);
            n += 1.0;
            for (i, k) in [1, 5, 10, 20].iter().enumerate() {
                sums[i] += evidence_recall(&q.evidence, &r, *k).unwrap();
            }
            let e = cats.entry(q.cat).or_default();
            e.0 += 1.0;
            e.1 += evidence_recall(&q.evidence, &r, 10).unwrap();
        }
        let mut c: Vec<_> = cats.into_iter().collect();
        c.sort_by_key(|x| x.0);
        let per: Vec<String> = c
            .iter()
            .map(|(k, (n, s))| format!("c{k} {:.3}", s / n))
            .collect();
        println!(
            "{name:<40} R@1 {:.3} R@5 {:.3} R@10 {:.3} R@20 {:.3}   {}",
            sums[0] / n,
            sums[1] / n,
            sums[2] / n,
            sums[3] / n,
            per.join(" ")
        );
    };

    let dense = |q: &Q, v: &str| -> Vec<(String, f64)> {
        let vs = &variants[q.conv][v];
        let mut s: Vec<(String, f64)> = turns[q.conv]
            .iter()
            .zip(vs)
            .map(|((d, _, _), x)| (d.clone(), dot(&q.qv, x) as f64))
            .collect();
        s.sort_by(|a, b| b.1.total_cmp(&a.1));
        s
    };
    let ids = |l: Vec<(String, f64)>| l.into_iter().map(|x| x.0).collect::<Vec<_>>();
    let rrf = |lists: &[(Vec<(String, f64)>, f64)], depth: usize| -> Vec<(String, f64)> {
        let mut m: HashMap<String, f64> = HashMap::new();
        for (l, w) in lists {
            for (r, (d, _)) in l.iter().take(depth).enumerate() {
                *m.entry(d.clone()).or_default() += w / (60.0 + r as f64 + 1.0);
            }
        }
        let mut v: Vec<_> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    };
    let convex = |lists: &[(Vec<(String, f64)>, f64)], depth: usize| -> Vec<(String, f64)> {
        let mut m: HashMap<String, f64> = HashMap::new();
        for (l, w) in lists {
            let l = &l[..depth.min(l.len())];
            if l.is_empty() {
                continue;
            }
            let hi = l[0].1;
            let lo = l[l.len() - 1].1;
            for (d, s) in l {
                let n = if hi > lo { (s - lo) / (hi - lo) } else { 1.0 };
                *m.entry(d.clone()).or_default() += w * n;
            }
        }
        let mut v: Vec<_> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    };

    report("keyword", &|q| q.kw.iter().map(|x| x.0.clone()).collect());
    for v in ["plain", "prev1", "dated"] {
        report(&format!("dense {v}"), &|q| ids(dense(q, v)));
    }
    for v in ["plain", "prev1", "dated"] {
        for depth in [40, 80] {
            report(&format!("rrf kw+{v} d{depth}"), &|q| {
                ids(rrf(&[(q.kw.clone(), 1.0), (dense(q, v), 1.0)], depth))
            });
            report(&format!("convex kw+{v} d{depth}"), &|q| {
                ids(convex(&[(q.kw.clone(), 0.5), (dense(q, v), 0.5)], depth))
            });
        }
    }
    report("rrf kw+plain+prev1 d80", &|q| {
        ids(rrf(
            &[
                (q.kw.clone(), 1.0),
                (dense(q, "plain"), 1.0),
                (dense(q, "prev1"), 1.0),
            ],
            80,
        ))
    });
    report("convex kw+plain+prev1 d80", &|q| {
        ids(convex(
            &[
                (q.kw.clone(), 0.5),
                (dense(q, "plain"), 0.25),
                (dense(q, "prev1"), 0.25),
            ],
            80,
        ))
    });
    report("keyword stop", &|q| {
        q.kws.iter().map(|x| x.0.clone()).collect()
    });
    report("convex kws+plain d80", &|q| {
        ids(convex(
            &[(q.kws.clone(), 0.5), (dense(q, "plain"), 0.5)],
            80,
        ))
    });
    report("convex kws+plain+prev1 d80", &|q| {
        ids(convex(
            &[
                (q.kws.clone(), 0.5),
                (dense(q, "plain"), 0.25),
                (dense(q, "prev1"), 0.25),
            ],
            80,
        ))
    });
    // neighbour helpers
    let pos: Vec<HashMap<String, usize>> = turns
        .iter()
        .map(|l| {
            l.iter()
                .enumerate()
                .map(|(i, (d, _, _))| (d.clone(), i))
                .collect()
        })
        .collect();
    let expand = |q: &Q, ranked: Vec<String>, top: usize| -> Vec<String> {
        let l = &turns[q.conv];
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for (r, d) in ranked.into_iter().enumerate() {
            let i = pos[q.conv][&d];
            let mut group = vec![i];
            if r < top {
                if i > 0 && l[i - 1].1 == l[i].1 {
                    group.push(i - 1);
                }
                if i + 1 < l.len() && l[i + 1].1 == l[i].1 {
                    group.push(i + 1);
                }
            }
            for g in group {
                if seen.insert(g) {
                    out.push(l[g].0.clone());
                }
            }
        }
        out
    };
    let smooth = |q: &Q, ranked: Vec<(String, f64)>, gamma: f64| -> Vec<String> {
        let l = &turns[q.conv];
        let mut sc = vec![0.0f64; l.len()];
        for (d, s) in &ranked {
            sc[pos[q.conv][d]] = *s;
        }
        let mut out: Vec<(usize, f64)> = (0..l.len())
            .map(|i| {
                let mut nb: f64 = 0.0;
                if i > 0 && l[i - 1].1 == l[i].1 {
                    nb = nb.max(sc[i - 1]);
                }
                if i + 1 < l.len() && l[i + 1].1 == l[i].1 {
                    nb = nb.max(sc[i + 1]);
                }
                (i, sc[i] + gamma * nb)
            })
            .filter(|x| x.1 > 0.0)
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out.into_iter().map(|(i, _)| l[i].0.clone()).collect()
    };
    let session_boost = |q: &Q, ranked: Vec<(String, f64)>, beta: f64| -> Vec<String> {
        let l = &turns[q.conv];
        let mut best: HashMap<usize, f64> = HashMap::new();
        for (d, s) in &ranked {
            let e = best.entry(l[pos[q.conv][d]].1).or_default();
            *e = e.max(*s);
        }
        let mut out: Vec<(String, f64)> = ranked
            .iter()
            .map(|(d, s)| (d.clone(), s + beta * best[&l[pos[q.conv][d]].1]))
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out.into_iter().map(|x| x.0).collect()
    };
    let smooth_s = |q: &Q, ranked: Vec<(String, f64)>, gamma: f64| -> Vec<(String, f64)> {
        let l = &turns[q.conv];
        let mut sc = vec![0.0f64; l.len()];
        for (d, s) in &ranked {
            sc[pos[q.conv][d]] = *s;
        }
        let mut out: Vec<(String, f64)> = (0..l.len())
            .map(|i| {
                let mut nb: f64 = 0.0;
                if i > 0 && l[i - 1].1 == l[i].1 {
                    nb = nb.max(sc[i - 1]);
                }
                if i + 1 < l.len() && l[i + 1].1 == l[i].1 {
                    nb = nb.max(sc[i + 1]);
                }
                (l[i].0.clone(), sc[i] + gamma * nb)
            })
            .filter(|x| x.1 > 0.0)
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out
    };
    let zfuse =
        |lists: &[(Vec<(String, f64)>, f64)], depth: usize, how: u8| -> Vec<(String, f64)> {
            let mut m: HashMap<String, f64> = HashMap::new();
            for (l, w) in lists {
                let l = &l[..depth.min(l.len())];
                if l.is_empty() {
                    continue;
                }
                let n = l.len() as f64;
                let mean = l.iter().map(|x| x.1).sum::<f64>() / n;
                let sd = (l.iter().map(|x| (x.1 - mean).powi(2)).sum::<f64>() / n)
                    .sqrt()
                    .max(1e-9);
                let hi = l[0].1;
                for (d, s) in l {
                    let v = match how {
                        0 => (s - mean) / sd,
                        _ => s / hi,
                    };
                    *m.entry(d.clone()).or_default() += w * v;
                }
            }
            let mut v: Vec<_> = m.into_iter().collect();
            // shift to positive for smoothing
            let lo = v.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
            for x in &mut v {
                x.1 -= lo - 1e-6;
            }
            v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            v
        };
    for how in [0u8, 1] {
        report(&format!("kws+plain norm{how}"), &|q| {
            ids(zfuse(
                &[(q.kws.clone(), 0.5), (dense(q, "plain"), 0.5)],
                80,
                how,
            ))
        });
        report(&format!("kws+plain norm{how} ctx"), &|q| {
            session_boost(
                q,
                smooth_s(
                    q,
                    zfuse(&[(q.kws.clone(), 0.5), (dense(q, "plain"), 0.5)], 80, how),
                    0.5,
                ),
                0.5,
            )
        });
    }
    report("kws+plain minmax ctx", &|q| {
        session_boost(
            q,
            smooth_s(
                q,
                convex(&[(q.kws.clone(), 0.5), (dense(q, "plain"), 0.5)], 80),
                0.5,
            ),
            0.5,
        )
    });
    let norm = |l: Vec<(String, f64)>| convex(&[(l, 1.0)], 80);
    report("kws alone ctx", &|q| {
        session_boost(q, smooth_s(q, norm(q.kws.clone()), 0.5), 0.5)
    });
    report("plain alone ctx", &|q| {
        session_boost(q, smooth_s(q, norm(dense(q, "plain")), 0.5), 0.5)
    });
    report("kws alone smooth", &|q| {
        ids(smooth_s(q, norm(q.kws.clone()), 0.5))
    });
    report("plain alone smooth", &|q| {
        ids(smooth_s(q, norm(dense(q, "plain")), 0.5))
    });
    let variants_fuse: Vec<(&str, Box<dyn Fn(&Q) -> Vec<(String, f64)>>)> = vec![
        (
            "kws+plain+prev1",
            Box::new(|q: &Q| {
                convex(
                    &[
                        (q.kws.clone(), 0.5),
                        (dense(q, "plain"), 0.25),
                        (dense(q, "prev1"), 0.25),
                    ],
                    80,
                )
            }),
        ),
        (
            "kws+plain",
            Box::new(|q: &Q| convex(&[(q.kws.clone(), 0.5), (dense(q, "plain"), 0.5)], 80)),
        ),
        (
            "kws+prev1",
            Box::new(|q: &Q| convex(&[(q.kws.clone(), 0.5), (dense(q, "prev1"), 0.5)], 80)),
        ),
        (
            "kws+dated",
            Box::new(|q: &Q| convex(&[(q.kws.clone(), 0.5), (dense(q, "dated"), 0.5)], 80)),
        ),
        (
            "kws+plain d40",
            Box::new(|q: &Q| convex(&[(q.kws.clone(), 0.5), (dense(q, "plain"), 0.5)], 40)),
        ),
        (
            "kws+plain+prev1 d40",
            Box::new(|q: &Q| {
                convex(
                    &[
                        (q.kws.clone(), 0.5),
                        (dense(q, "plain"), 0.25),
                        (dense(q, "prev1"), 0.25),
                    ],
                    40,
                )
            }),
        ),
        (
            "rrf kws+plain",
            Box::new(|q: &Q| rrf(&[(q.kws.clone(), 1.0), (dense(q, "plain"), 1.0)], 80)),
        ),
    ];
    for (name, f) in &variants_fuse {
        report(name, &|q| ids(f(q)));
        report(&format!("{name} +smooth"), &|q| ids(smooth_s(q, f(q), 0.5)));
        report(&format!("{name} +session"), &|q| {
            session_boost(q, f(q), 0.5)
        });
        report(&format!("{name} +smooth+session"), &|q| {
            session_boost(q, smooth_s(q, f(q), 0.5), 0.5)
        });
        report(&format!("{name} +session+smooth"), &|q| {
            let r = f(q);
            let b: Vec<(String, f64)> = {
                let l = &turns[q.conv];
                let mut best: HashMap<usize, f64> = HashMap::new();
                for (d, s) in &r {
                    let e = best.entry(l[pos[q.conv][d]].1).or_default();
                    *e = e.max(*s);
                }
                r.iter()
                    .map(|(d, s)| (d.clone(), s + 0.5 * best[&l[pos[q.conv][d]].1]))
                    .collect()
            };
            ids(smooth_s(q, b, 0.5))
        });
    }
    Ok(())
}
