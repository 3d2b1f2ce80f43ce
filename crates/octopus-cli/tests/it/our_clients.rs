//! Octopus's own clients, each run by its own test suite against a real
//! `octopus serve`: `clients/python` with pytest, installed as a user
//! installs it; `clients/typescript` with Node's test runner; and the web
//! console in Debian's chromium, driven by selenium (`tests/clients/
//! console.py`). The server's chat model is the loopback fake on OpenAI's
//! wire format, answering `echo: <the user's last message>`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use octopus_testkit::fake_chat::{self, ChatProvider};

use crate::clients::{clients_dir, python, required, run, run_in};
use crate::process::{ADMIN_KEY, Server};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A server whose operator trusts the loopback chat model and holds the
/// OpenAI key it asks for, and lets webhooks reach loopback endpoints; and
/// the model's base URL for an agent.
async fn server_with_chat(dir: &Path) -> (Server, String) {
    let fake = Arc::new(ChatProvider::default());
    let fake_url = fake_chat::serve(fake).await;
    let config = dir.join("octopus.toml");
    std::fs::write(
        &config,
        format!(
            "[llm]\nmax_retries = 0\nallowed_base_urls = [\"{fake_url}\"]\n\
             [webhooks]\ndestinations = \"any\"\nretry_schedule_secs = [0.5]\n"
        ),
    )
    .unwrap();
    let server = Server::start_with_env(
        &dir.join("data"),
        Some(&config),
        None,
        &[("OPENAI_API_KEY", "sk-test")],
    );
    (server, format!("{fake_url}/v1"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_client_passes_its_suite() {
    let dir = tempfile::tempdir().unwrap();
    let (server, chat_url) = server_with_chat(dir.path()).await;
    // Built into a wheel from a copy of its folder (a build writes beside
    // the sources, which are not ours to dirty) and installed from that
    // wheel with every integration's extra, as a user installs it.
    let sources = copy_of("python", dir.path());
    let dist = dir.path().join("dist");
    run(
        &python(),
        &[
            Path::new("-m"),
            Path::new("build"),
            Path::new("--wheel"),
            Path::new("--no-isolation"),
            Path::new("--outdir"),
            &dist,
            &sources,
        ],
        &[],
    );
    let wheel = only_file(&dist, ".whl");
    let site = environment_over_the_pins(dir.path());
    let extras = format!(
        "{}[langchain,langgraph,llama-index,openai-agents]",
        wheel.display()
    );
    // No index: the extras' requirements must be met by the pinned
    // packages already installed, or the install fails.
    run(
        &site,
        &[
            Path::new("-m"),
            Path::new("pip"),
            Path::new("install"),
            Path::new("--quiet"),
            Path::new("--disable-pip-version-check"),
            Path::new("--no-index"),
            Path::new(&extras),
        ],
        &[],
    );
    let installed = run(
        &site,
        &[
            Path::new("-c"),
            Path::new("import octopus_client; print(octopus_client.__file__)"),
        ],
        &[],
    );
    assert!(
        installed.starts_with(dir.path().join("site").to_str().unwrap()),
        "the tests import the installed wheel: {installed}"
    );
    let printed = run(
        &site,
        &[
            Path::new("-m"),
            Path::new("pytest"),
            Path::new("-q"),
            Path::new("-p"),
            Path::new("no:cacheprovider"),
            &repository().join("clients/python/tests"),
        ],
        &[
            ("PYTHONDONTWRITEBYTECODE", "1"),
            ("OCTOPUS_URL", &server.url),
            ("OCTOPUS_ADMIN_KEY", ADMIN_KEY),
            ("OCTOPUS_TEST_CHAT_URL", &chat_url),
            ("OCTOPUS_TEST_CHAT_EXPORTS", &chat_exports()),
        ],
    );
    assert!(printed.contains(" passed"), "{printed}");
}

/// The folder of the ChatGPT and Claude exports the suites import.
fn chat_exports() -> String {
    repository()
        .join("crates/octopus-core/tests/fixtures/chat_exports")
        .to_string_lossy()
        .into_owned()
}

/// The python of a new virtual environment in `dir/site` that sees the
/// cached, pinned packages (through a `.pth` file) but holds none of its own.
fn environment_over_the_pins(dir: &Path) -> PathBuf {
    let site = dir.join("site");
    run(
        &python(),
        &[
            Path::new("-m"),
            Path::new("venv"),
            Path::new("--without-pip"),
            &site,
        ],
        &[],
    );
    let python_of_site = site.join("bin/python");
    let packages_of = |python: &Path| {
        let code = "import sysconfig; print(sysconfig.get_paths()['purelib'])";
        PathBuf::from(run(python, &[Path::new("-c"), Path::new(code)], &[]).trim())
    };
    std::fs::write(
        packages_of(&python_of_site).join("pinned.pth"),
        packages_of(&python()).to_str().unwrap(),
    )
    .unwrap();
    python_of_site
}

/// `name@version` as `scripts/clients.sh` pins it for the tests.
fn pinned_npm_package(name: &str) -> String {
    let pins = std::fs::read_to_string(repository().join("scripts/clients.sh")).unwrap();
    let line = pins
        .lines()
        .find(|line| line.starts_with("NPM_PINS="))
        .unwrap();
    let prefix = format!("{name}@");
    line.trim_start_matches("NPM_PINS=")
        .trim_matches('"')
        .split(' ')
        .find(|pin| pin.starts_with(&prefix))
        .unwrap_or_else(|| panic!("{name} is not pinned: {line}"))
        .to_owned()
}

/// The one file in `dir` whose name ends with `suffix`.
fn only_file(dir: &Path, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.into_iter().next().unwrap()
}

/// A copy of `clients/<name>` in `dir`, as a user's checkout holds it.
fn copy_of(name: &str, dir: &Path) -> PathBuf {
    let copy = dir.join(name);
    let copied = Command::new("cp")
        .arg("-r")
        .arg(repository().join("clients").join(name))
        .arg(&copy)
        .status()
        .unwrap();
    assert!(copied.success());
    copy
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_client_passes_its_suite() {
    let dir = tempfile::tempdir().unwrap();
    let (server, chat_url) = server_with_chat(dir.path()).await;
    // Its suite runs in a copy, with the pinned typescript and
    // openapi-typescript it checks its generated files with.
    let package = copy_of("typescript", dir.path());
    let modules = package.join("node_modules");
    let _ = std::fs::remove_file(&modules);
    std::os::unix::fs::symlink(required("OCTOPUS_TEST_NODE_MODULES"), &modules).unwrap();
    let tests: Vec<PathBuf> = std::fs::read_dir(package.join("test"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(".test.mjs"))
        .collect();
    assert!(tests.len() >= 2, "{tests:?}");
    let mut args: Vec<&Path> = vec![Path::new("--test")];
    args.extend(tests.iter().map(PathBuf::as_path));
    let exports = chat_exports();
    let env = [
        ("OCTOPUS_URL", server.url.as_str()),
        ("OCTOPUS_ADMIN_KEY", ADMIN_KEY),
        ("OCTOPUS_TEST_CHAT_URL", chat_url.as_str()),
        ("OCTOPUS_TEST_CHAT_EXPORTS", exports.as_str()),
    ];
    let printed = run_in(&package, Path::new("node"), &args, &env);
    assert!(printed.contains("# fail 0"), "{printed}");

    // Packed into a tarball (`npm pack`) and installed from it in a project
    // of the user's, beside the `ai` its middleware needs; the project's
    // code then imports both entry points by name.
    let packed = dir.path().join("packed");
    std::fs::create_dir(&packed).unwrap();
    run_in(
        &package,
        Path::new("npm"),
        &[
            Path::new("pack"),
            Path::new("--silent"),
            Path::new("--pack-destination"),
            &packed,
        ],
        &[],
    );
    let tarball = only_file(&packed, ".tgz");
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("package.json"), r#"{"type": "module"}"#).unwrap();
    let ai = pinned_npm_package("ai");
    let zod = pinned_npm_package("zod");
    run_in(
        &project,
        Path::new("npm"),
        &[
            Path::new("install"),
            Path::new("--prefer-offline"),
            Path::new("--no-audit"),
            Path::new("--no-fund"),
            &tarball,
            Path::new(&ai),
            Path::new(&zod),
        ],
        &[],
    );
    std::fs::write(
        project.join("main.mjs"),
        "import { Octopus } from 'octopus-client';\n\
         import { octopusMemory } from 'octopus-client/ai-sdk';\n\
         const octopus = new Octopus({ baseUrl: process.env.OCTOPUS_URL, apiKey: process.env.OCTOPUS_ADMIN_KEY });\n\
         octopusMemory({ octopus, agentId: 'a', userId: 'u' });\n\
         console.log(JSON.stringify(await octopus.listTenants()));\n",
    )
    .unwrap();
    let tenants: serde_json::Value = serde_json::from_str(&run_in(
        &project,
        Path::new("node"),
        &[Path::new("main.mjs")],
        &env,
    ))
    .unwrap();
    assert!(
        !tenants.as_array().unwrap().is_empty(),
        "the suite's tenants are listed: {tenants}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_works_in_a_real_browser() {
    let dir = tempfile::tempdir().unwrap();
    let (server, chat_url) = server_with_chat(dir.path()).await;
    // Screenshots of every page, kept after the run.
    let artifacts = Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-screenshots");
    let _ = std::fs::remove_dir_all(&artifacts);
    let printed = run(
        &python(),
        &[&clients_dir().join("console.py")],
        &[
            ("OCTOPUS_URL", &server.url),
            ("OCTOPUS_ADMIN_KEY", ADMIN_KEY),
            ("OCTOPUS_TEST_CHAT_URL", &chat_url),
            ("OCTOPUS_TEST_ARTIFACTS", artifacts.to_str().unwrap()),
            // Selenium finds no driver of its own: Debian's is named.
            ("SE_OFFLINE", "true"),
        ],
    );
    let shots = std::fs::read_dir(&artifacts).unwrap().count();
    assert!(shots >= 25, "{shots} screenshots: {printed}");
}
