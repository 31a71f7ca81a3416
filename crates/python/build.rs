//! Embeds the git commit the extension was built from (FABRICLAB_GIT_COMMIT),
//! for the provenance of a Python `Result`: the CLI's build script, shared.
include!("../cli/build.rs");
