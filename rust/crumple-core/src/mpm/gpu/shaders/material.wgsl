// Material dispatch on the packed record: the twin of `mpm/material.rs` `volume_kirchhoff`,
// `volume_plasticity`, `codim_piola`, `codim_return_map` (the public functions of the constitutive
// library).
//
// Packed material records (`materials.rs`: `pack_volume_material`, `pack_codim_material`).
// 16 f32 per material; `v[0].x` is the kind. Unused slots are 0.
//
// Volume (type i, spec §4.6):           Codim (type iii, spec §4.3, §4.4):
//   v[0] = (kind, mu, lambda, 0)           v[0] = (kind, mu, lambda, gamma)
//   Elastic: nothing else                  v[1] = Surface: (k, c_F, 0, 0)
//   Sand: v[1] = (h0, h1, h2, h3)                 Curve:   (k, alpha, beta, (lambda + mu)/mu)
//         v[2] = ((3 lambda + 2 mu)/(2 mu),  v[2] = (degenerate eps, 0, 0, 0)
//                 no_flow, 0, 0)
//   Goo:  v[1] = (yield_stress, viscosity,
//                 e_yield, 0)
// Derived constants (the sand and curve Drucker–Prager factors, the goo yield strain) are
// computed on the host with the CPU's own f32 expression, so they are bit-identical. Sand
// `no_flow = 1` marks parameters whose factor is not finite (mu = 0), where the CPU's δγ is
// never positive; the curve factor is only read when mu > 0.

struct PackedMaterial {
    v: array<vec4<f32>, 4>,
}

// mpm/material.rs `volume_kirchhoff`: P Fᵀ per unit rest volume (spec §3.3), corotated for
// Elastic, Hencky for Sand and Goo.
fn volume_kirchhoff(m: PackedMaterial, F: mat3x3<f32>) -> mat3x3<f32> {
    let kind = u32(m.v[0].x);
    let mu = m.v[0].y;
    let lambda = m.v[0].z;
    var p: mat3x3<f32>;
    if (kind == CM_VOLUME_ELASTIC) {
        p = cm_corotated_piola(F, mu, lambda);
    } else {
        p = cm_hencky_piola(F, mu, lambda);
    }
    return cm_mul(p, transpose(F));
}

// mpm/material.rs `volume_plasticity`: sand and goo return maps; Elastic is unchanged.
fn volume_plasticity(m: PackedMaterial, F: mat3x3<f32>, q: f32, dt: f32) -> VolumePlastic {
    let kind = u32(m.v[0].x);
    if (kind == CM_VOLUME_SAND) {
        return cm_sand_return_map(m, F, q);
    }
    if (kind == CM_VOLUME_GOO) {
        return VolumePlastic(cm_goo_return_map(m, F, dt), q);
    }
    return VolumePlastic(F, q);
}

// mpm/material.rs `codim_piola`: surface or curve stress, ok = 0 for a degenerate element.
fn codim_piola(m: PackedMaterial, F: mat3x3<f32>) -> CodimPiola {
    if (u32(m.v[0].x) == CM_CODIM_CURVE) {
        return cm_curve_piola(m, F);
    }
    return cm_surface_piola(m, F);
}

// mpm/material.rs `codim_return_map`: surface (no inverted clamp) or curve return map.
fn codim_return_map(m: PackedMaterial, F: mat3x3<f32>) -> CodimReturn {
    if (u32(m.v[0].x) == CM_CODIM_CURVE) {
        return cm_curve_return_map(m, F);
    }
    return cm_surface_return_map(m, F);
}
