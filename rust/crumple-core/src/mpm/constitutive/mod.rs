//! Constitutive models: one pure function per material and particle (spec §4, §5).
