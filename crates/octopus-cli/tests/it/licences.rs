//! Every package the repository publishes declares the licence the
//! repository is under: the crates (through the workspace), the TypeScript
//! client and the Python client.

use std::path::Path;

fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(path)).unwrap()
}

#[test]
fn every_package_declares_the_repositorys_licence() {
    let workspace: toml::Value = toml::from_str(&read("Cargo.toml")).unwrap();
    let licence = workspace["workspace"]["package"]["license"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        read("LICENSE").contains("Apache License"),
        "LICENSE is the {licence} text"
    );
    assert_eq!(licence, "Apache-2.0");
    let typescript: serde_json::Value =
        serde_json::from_str(&read("clients/typescript/package.json")).unwrap();
    assert_eq!(typescript["license"], licence.as_str(), "package.json");
    let python: toml::Value = toml::from_str(&read("clients/python/pyproject.toml")).unwrap();
    assert_eq!(
        python["project"]["license"]["text"].as_str(),
        Some(licence.as_str()),
        "pyproject.toml"
    );
    for crate_dir in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("..")).unwrap() {
        let path = crate_dir.unwrap().path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let manifest: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(
            manifest["package"]["license"]["workspace"].as_bool(),
            Some(true),
            "{} takes the workspace's licence",
            path.display()
        );
    }
}
