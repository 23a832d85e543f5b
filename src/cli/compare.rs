pub fn main(_a: CompareArgs) -> i32 {
    2
}
#[derive(clap::Args, Debug)]
pub struct CompareArgs {}
