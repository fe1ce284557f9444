//! The `adjit` command-line program: a thin `main` over [`cli`], which uses
//! the library's public API only.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
