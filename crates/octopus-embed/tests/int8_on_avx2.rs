//! int8 as a CPU with AVX2 but no VNNI runs it: weights packed onto ±63 and
//! multiplied by `vpmaddubsw`. In a process of its own, because the
//! products' instructions are lowered for the whole process.

#![cfg(target_arch = "x86_64")]
#![allow(clippy::unwrap_used)] // test code: a panic is how it fails

#[path = "it/int8_agreement.rs"]
mod int8_agreement;

use octopus_embed::local::Int8Instructions;

#[test]
fn int8_on_avx2_alone_stays_close_to_the_reference() {
    assert!(
        Int8Instructions::Avx2.present(),
        "an x86-64 CPU without AVX2"
    );
    Int8Instructions::Avx2.limit_to();
    assert_eq!(Int8Instructions::detect(), Int8Instructions::Avx2);
    int8_agreement::assert_int8_stays_close("avx2");
}
