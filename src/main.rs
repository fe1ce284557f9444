//! The `adjit` command-line program.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
