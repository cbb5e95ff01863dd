// Per-particle constitutive math of the MPM solver (spec `mpm_anisotropic.md` §4, §5, §10.3): the
// WGSL twin of the f32 CPU path in `math/{svd,eigen,qr,mat2}.rs`, `math/polar.rs`,
// `mpm/constitutive/*.rs` and `mpm/material.rs`.
//
// A library: no bindings, no entry points. It is concatenated in front of the kernels that use it
// (`materials.rs`: `CONSTITUTIVE_WGSL`). Public names: `PackedMaterial`, `Svd3`, `svd3`, `Qr3`,
// `qr3`, `VolumePlastic`, `CodimPiola`, `CodimReturn`, `volume_kirchhoff`, `volume_plasticity`,
// `codim_piola`, `codim_return_map`, and the `CM_*` constants; every private helper starts with `cm_`.
//
// Mirroring rules, so the GPU agrees with the CPU to f32 rounding:
// * Every formula keeps the CPU's operation order (`a * b * c` is `(a * b) * c`, sums left to
//   right) and its branch structure (same tests, same order, same sweep limits and tolerances).
//   Dot products, cross products, determinants and matrix products are written out instead of
//   using the builtins, whose evaluation order is unspecified.
// * Matrices: WGSL is column-major (`M[j]` is column j, `M[j][i]` is row i of it); the CPU `Mat3`
//   is row-major (`m[i][j]`). So CPU `m[i][j]` is WGSL `M[j][i]` throughout; comments name entries
//   by the CPU convention (`r12` = row 1, column 2, one-based).
// * Constants the CPU builds with `T::from_f64(x)` are written as the decimal expansion of that
//   f32 value, so the literal converts exactly (the hex bit pattern is in the comment).
// * The WGSL transcendental builtins only promise loose accuracy (`log`: absolute 2^-21 near 1,
//   which is a large *relative* error of a small Hencky strain; `exp`: 3 + 2|x| ULP; `sin`/`cos`:
//   absolute 2^-11; `atan2`: 4096 ULP), while the CPU calls the platform libm (≤ 1 ULP). So `ln`,
//   `exp`, `sin`/`cos`, `atan2` and `hypot` are computed here in plain f32 arithmetic
//   (`cm_ln`, `cm_exp`, `cm_sincos`, `cm_atan2`, `cm_hypot`; ports of fdlibm/Cephes, ≤ ~2 ULP)
//   and agree with the CPU to a few ULP on every device.
// * Non-finite values are detected on the bit pattern (`cm_is_finite`): WGSL lets implementations
//   assume that floats are finite, so `x != x` style tests may be optimised away.

// ---------------------------------------------------------------------------------------------
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
// ---------------------------------------------------------------------------------------------

struct PackedMaterial {
    v: array<vec4<f32>, 4>,
}

const CM_VOLUME_ELASTIC: u32 = 0u;
const CM_VOLUME_SAND: u32 = 1u;
const CM_VOLUME_GOO: u32 = 2u;
const CM_CODIM_SURFACE: u32 = 0u;
const CM_CODIM_CURVE: u32 = 1u;

// `ReturnEvent` discriminants, in the declaration order of `mpm/constitutive/mod.rs`.
const CM_EVENT_ELASTIC: u32 = 0u;
const CM_EVENT_TENSION: u32 = 1u;
const CM_EVENT_INVERTED: u32 = 2u;
const CM_EVENT_SLIDE: u32 = 3u;
const CM_EVENT_DEGENERATE: u32 = 4u;

// f32::EPSILON = 2^-23 and the tolerances `svd3` derives from it (math/svd.rs).
const CM_EPSILON: f32 = 1.1920928955078125e-7;
const CM_SVD_TOL: f32 = 2.384185791015625e-7; // 2 ε
const CM_SVD_FLOOR: f32 = 2.0194839173657902e-28; // ε⁴ = 2^-92
const CM_JACOBI_BIG: f32 = 8388608.0; // 1/ε (math/eigen.rs `jacobi_rotation`)
const CM_MAX_SWEEPS: u32 = 16u; // math/eigen.rs MAX_SWEEPS
const CM_REORTH_PASSES: u32 = 3u; // math/qr.rs REORTH_PASSES
// math/polar.rs: MAX_ITERS, tol = 16 ε, the 1e-3 conditioning test, and -1/3 as f32.
const CM_POLAR_MAX_ITERS: u32 = 12u;
const CM_POLAR_TOL: f32 = 1.9073486328125e-6;
const CM_POLAR_DET_FLOOR: f32 = 0.0010000000474974513; // f32(1e-3), 0x3a83126f
const CM_MINUS_THIRD: f32 = -0.3333333432674408; // f32(-1/3), 0xbeaaaaab
// constitutive/mod.rs LOG_CLAMP = 1e-4 as f32, 0x38d1b717.
const CM_LOG_CLAMP: f32 = 9.999999747378752e-5;
// f32(sqrt(2/3)) of `drucker_prager_alpha` and goo, 0x3f5105ec.
const CM_SQRT_2_3: f32 = 0.8164966106414795;
// f32(π/180) of `SandParams::alpha`, 0x3c8efa35.
const CM_DEG_TO_RAD: f32 = 0.01745329238474369;
// `T::TWO.sqrt()` in f32 (curve cross-section ‖e‖), 0x3fb504f3.
const CM_SQRT2: f32 = 1.4142135381698608;

const CM_PI: f32 = 3.1415927410125732; // f32(π)
const CM_PI_2: f32 = 1.5707963705062866; // f32(π/2)
const CM_PI_4: f32 = 0.7853981852531433; // f32(π/4)

// ---------------------------------------------------------------------------------------------
// Scalar helpers.
// ---------------------------------------------------------------------------------------------

// `f32::is_finite` on the bit pattern (exponent not all ones).
fn cm_is_finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

fn cm_vec_is_finite(v: vec3<f32>) -> bool {
    return cm_is_finite(v.x) && cm_is_finite(v.y) && cm_is_finite(v.z);
}

// `Mat3::is_finite`.
fn cm_mat_is_finite(m: mat3x3<f32>) -> bool {
    return cm_vec_is_finite(m[0]) && cm_vec_is_finite(m[1]) && cm_vec_is_finite(m[2]);
}

// A quiet NaN built from a runtime value (a constant NaN would be rejected by shader compilers
// that evaluate constant expressions).
fn cm_nan_like(seed: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(seed) | 0x7fc00000u);
}

// `hypot(x, y)` (Rust `f32::hypot`, used by the surface in-plane rotation, the surface and curve
// return maps and the 2×2 SVD). Direct `sqrt(x² + y²)` (≈ 1 ULP) where neither square can
// over- or underflow to matter, else scaled by the larger magnitude.
fn cm_hypot(x: f32, y: f32) -> f32 {
    let ax = abs(x);
    let ay = abs(y);
    let big = max(ax, ay);
    let small = min(ax, ay);
    if (big >= 8.881784197001252e-16 && big <= 1125899906842624.0) {
        // 2^-50 ≤ big ≤ 2^50
        return sqrt(ax * ax + ay * ay);
    }
    if (!(big > 0.0) || !cm_is_finite(big)) {
        return big;
    }
    let r = small / big;
    return big * sqrt(1.0 + r * r);
}

// Natural logarithm in f32 arithmetic: a port of FreeBSD's `e_logf.c` (fdlibm, < 1 ULP). Used
// where the CPU calls `f32::ln` (Hencky strains, polar-rotation scaling); see the file header for
// why not the `log` builtin.
fn cm_ln(x_in: f32) -> f32 {
    var x = x_in;
    var ix = bitcast<i32>(x);
    var k = 0i;
    if (ix < 0x00800000) {
        if ((ix & 0x7fffffff) == 0) {
            return bitcast<f32>(0xff800000u | bitcast<u32>(x)); // ln(±0) = −∞
        }
        if (ix < 0) {
            return cm_nan_like(x); // ln(negative) = NaN
        }
        // Subnormal: scale up by 2^25.
        k -= 25;
        x *= 33554432.0;
        ix = bitcast<i32>(x);
    }
    if (ix >= 0x7f800000) {
        return x + x; // +∞ or NaN
    }
    k += (ix >> 23u) - 127;
    ix &= 0x007fffff;
    let i = (ix + (0x95f64 << 3u)) & 0x800000;
    x = bitcast<f32>(ix | (i ^ 0x3f800000)); // normalise x or x/2 into [√2/2, √2)
    k += i >> 23u;
    let f = x - 1.0;
    let dk = f32(k);
    let ln2_hi = 0.6931381225585938; // 0x3f317180
    let ln2_lo = 9.05800061445916e-06; // 0x3717f7d1
    if ((0x007fffff & (0x8000 + ix)) < 0xc000) {
        // -2^-9 <= f < 2^-9
        if (f == 0.0) {
            if (k == 0) {
                return 0.0;
            }
            return dk * ln2_hi + dk * ln2_lo;
        }
        let rr = f * f * (0.5 - 0.3333333432674408 * f);
        if (k == 0) {
            return f - rr;
        }
        return dk * ln2_hi - ((rr - dk * ln2_lo) - f);
    }
    let s = f / (2.0 + f);
    let z = s * s;
    var ii = ix - (0x6147a << 3u);
    let w = z * z;
    let j = (0x6b851 << 3u) - ix;
    let t1 = w * (0.40000972151756287 + w * 0.24279078841209412); // Lg2, Lg4
    let t2 = z * (0.6666666269302368 + w * 0.2849878668785095); // Lg1, Lg3
    ii |= j;
    let rr = t2 + t1;
    if (ii > 0) {
        let hfsq = 0.5 * f * f;
        if (k == 0) {
            return f - (hfsq - s * (hfsq + rr));
        }
        return dk * ln2_hi - ((hfsq - (s * (hfsq + rr) + dk * ln2_lo)) - f);
    }
    if (k == 0) {
        return f - s * (f - rr);
    }
    return dk * ln2_hi - ((s * (f - rr) - dk * ln2_lo) - f);
}

// Exponential in f32 arithmetic: Cephes `expf` (Cody–Waite reduction by ln 2, degree-6 polynomial,
// ~1 ULP). Used where the CPU calls `f32::exp` (return maps, sand hardening, polar scaling).
fn cm_exp(x_in: f32) -> f32 {
    if (x_in > 88.72283935546875) {
        return bitcast<f32>((bitcast<u32>(x_in) & 0x80000000u) | 0x7f800000u); // +∞
    }
    if (x_in < -103.2789306640625) {
        return 0.0;
    }
    let z = floor(1.4426950216293335 * x_in + 0.5);
    var x = x_in - z * 0.693359375;
    x = x - z * -0.00021219444170128554;
    let n = i32(z);
    let xx = x * x;
    let p = (((((0.00019875691214110702 * x + 0.001398199936375022) * x + 0.008333452045917511) * x
        + 0.04166579619050026) * x + 0.1666666567325592) * x + 0.5) * xx + x + 1.0;
    return ldexp(p, n);
}

// `(sin x, cos x)` in f32 arithmetic: Cephes `sinf`/`cosf` (octant reduction with a three-part
// π/4, minimax polynomials on [−π/4, π/4], ~1 ULP for |x| < 8192). Used where the CPU calls
// `f32::sin`/`cos` (Drucker–Prager α of sand, `rot2` of the 2×2 SVD).
fn cm_sincos(xx: f32) -> vec2<f32> {
    let x = abs(xx);
    var j = u32(1.2732394933700562 * x); // x / (π/4)
    var y = f32(j);
    if ((j & 1u) != 0u) {
        j += 1u;
        y += 1.0;
    }
    j &= 7u;
    var sgn_s = select(1.0, -1.0, xx < 0.0);
    var sgn_c = 1.0;
    if (j > 3u) {
        sgn_s = -sgn_s;
        sgn_c = -sgn_c;
        j -= 4u;
    }
    if (j > 1u) {
        sgn_c = -sgn_c;
    }
    let r = ((x - y * 0.78515625) - y * 0.00024187564849853516) - y * 3.774895063202166e-08;
    let z = r * r;
    let sp = ((-0.00019515295571181923 * z + 0.008332161232829094) * z - 0.16666655242443085) * z * r + r;
    let cp = (((2.44331567955669e-05 * z - 0.0013887316454201937) * z + 0.04166664555668831) * (z * z)
        - 0.5 * z) + 1.0;
    if (j == 2u) {
        return vec2<f32>(sgn_s * cp, sgn_c * sp);
    }
    return vec2<f32>(sgn_s * sp, sgn_c * cp);
}

// `atan(x)`: Cephes `atanf` (reduction at tan(π/8), tan(3π/8), degree-9 odd polynomial).
fn cm_atan(xx: f32) -> f32 {
    var x = abs(xx);
    var y = 0.0;
    if (x > 2.4142136573791504) {
        y = CM_PI_2;
        x = -(1.0 / x);
    } else if (x > 0.4142135679721832) {
        y = CM_PI_4;
        x = (x - 1.0) / (x + 1.0);
    }
    let z = x * x;
    y += (((0.08053744584321976 * z - 0.13877685368061066) * z + 0.19977711141109467) * z
        - 0.3333294987678528) * z * x + x;
    return select(y, -y, xx < 0.0);
}

// `y.atan2(x)` (Rust `f32::atan2`, C99 conventions for signed zeros): Cephes `atan2f` on top of
// `cm_atan`. Used by the closed-form 2×2 SVD (math/mat2.rs `svd2_signed`).
fn cm_atan2(y: f32, x: f32) -> f32 {
    let y_neg = (bitcast<u32>(y) & 0x80000000u) != 0u;
    let x_neg = (bitcast<u32>(x) & 0x80000000u) != 0u;
    if (y == 0.0) {
        if (x_neg) {
            return select(CM_PI, -CM_PI, y_neg); // atan2(±0, x ≤ −0) = ±π
        }
        return y; // atan2(±0, x ≥ +0) = ±0
    }
    if (x == 0.0) {
        return select(CM_PI_2, -CM_PI_2, y_neg);
    }
    var w = 0.0;
    if (x < 0.0) {
        w = select(CM_PI, -CM_PI, y_neg);
    }
    return w + cm_atan(y / x);
}

// ---------------------------------------------------------------------------------------------
// Vec3 / Mat3 helpers (math/vec3.rs, math/mat3.rs), written out in the CPU's operation order.
// ---------------------------------------------------------------------------------------------

// `Vec3::dot`: x·x' + y·y' + z·z', left to right.
fn cm_dot(a: vec3<f32>, b: vec3<f32>) -> f32 {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

fn cm_norm2(a: vec3<f32>) -> f32 {
    return cm_dot(a, a);
}

fn cm_norm(a: vec3<f32>) -> f32 {
    return sqrt(cm_dot(a, a));
}

// `Vec3::cross`.
fn cm_cross(a: vec3<f32>, b: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

// `v.abs().max_element()`.
fn cm_max_abs3(v: vec3<f32>) -> f32 {
    let a = abs(v);
    return max(max(a.x, a.y), a.z);
}

// `Mat3::max_abs`.
fn cm_mat_max_abs(m: mat3x3<f32>) -> f32 {
    return max(max(cm_max_abs3(m[0]), cm_max_abs3(m[1])), cm_max_abs3(m[2]));
}

// `Mat3 * Mat3`: CPU r[i][j] = a[i][0] b[0][j] + a[i][1] b[1][j] + a[i][2] b[2][j]; column j of the
// result is a[:,0] b[0][j] + a[:,1] b[1][j] + a[:,2] b[2][j], the same sums per entry.
fn cm_mul(a: mat3x3<f32>, b: mat3x3<f32>) -> mat3x3<f32> {
    return mat3x3<f32>(
        a[0] * b[0].x + a[1] * b[0].y + a[2] * b[0].z,
        a[0] * b[1].x + a[1] * b[1].y + a[2] * b[1].z,
        a[0] * b[2].x + a[1] * b[2].y + a[2] * b[2].z,
    );
}

// `Mat3 * Vec3`: row i · v = m[i][0] v.x + m[i][1] v.y + m[i][2] v.z.
fn cm_mul_vec(m: mat3x3<f32>, v: vec3<f32>) -> vec3<f32> {
    return m[0] * v.x + m[1] * v.y + m[2] * v.z;
}

// `Mat3::determinant` = col0 · (col1 × col2).
fn cm_det(m: mat3x3<f32>) -> f32 {
    return cm_dot(m[0], cm_cross(m[1], m[2]));
}

// `Mat3::cofactor` = from_cols(c1 × c2, c2 × c0, c0 × c1).
fn cm_cofactor(m: mat3x3<f32>) -> mat3x3<f32> {
    return mat3x3<f32>(cm_cross(m[1], m[2]), cm_cross(m[2], m[0]), cm_cross(m[0], m[1]));
}

fn cm_identity() -> mat3x3<f32> {
    return mat3x3<f32>(vec3<f32>(1.0, 0.0, 0.0), vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(0.0, 0.0, 1.0));
}

// ---------------------------------------------------------------------------------------------
// QR with a proper-rotation Q (math/qr.rs `qr3`, spec §4.1, §9 A2).
// ---------------------------------------------------------------------------------------------

// `a = Q R`: Q ∈ SO(3) (columns q1, q2, q3 = q1 × q2), R upper triangular, r11, r22 ≥ 0, r33 signed.
struct Qr3 {
    Q: mat3x3<f32>,
    R: mat3x3<f32>,
}

// `unit_and_norm`: `ok = false` is the CPU's `None` (zero or non-finite vector).
struct CmUnitNorm {
    u: vec3<f32>,
    n: f32,
    ok: bool,
}

// math/qr.rs `unit_and_norm`: v / |v| and |v|, dividing by the largest component first.
fn cm_unit_and_norm(v: vec3<f32>) -> CmUnitNorm {
    if (!cm_vec_is_finite(v)) {
        return CmUnitNorm(vec3<f32>(0.0), 0.0, false);
    }
    let m = cm_max_abs3(v);
    if (m <= 0.0) {
        return CmUnitNorm(vec3<f32>(0.0), 0.0, false);
    }
    let u = vec3<f32>(v.x / m, v.y / m, v.z / m);
    let n = cm_norm(u);
    return CmUnitNorm(u * (1.0 / n), n * m, true);
}

// math/qr.rs `robust_norm`.
fn cm_robust_norm(v: vec3<f32>) -> f32 {
    let m = cm_max_abs3(v);
    if (m > 0.0 && cm_is_finite(m)) {
        return cm_norm(vec3<f32>(v.x / m, v.y / m, v.z / m)) * m;
    }
    return m;
}

// math/qr.rs `orthogonal_unit`: the axis least aligned with the unit vector u (lowest index on
// ties), minus its u component, normalised.
fn cm_orthogonal_unit(u: vec3<f32>) -> vec3<f32> {
    let a = abs(u);
    var k = 2u;
    if (a.x <= a.y && a.x <= a.z) {
        k = 0u;
    } else if (a.y <= a.z) {
        k = 1u;
    }
    var e = vec3<f32>(0.0);
    e[k] = 1.0;
    e = e - u * u[k];
    return e * (1.0 / cm_norm(e));
}

// math/qr.rs `qr3`: Gram–Schmidt on columns 1–2 with Kahan–Parlett re-orthogonalisation (at most
// CM_REORTH_PASSES extra passes), q3 = q1 × q2 so r33 = q3·c3 carries the sign of det a. Degenerate
// columns complete the basis instead of producing NaN (same fallbacks as the CPU).
fn qr3(a: mat3x3<f32>) -> Qr3 {
    let c1 = a[0];
    let c2 = a[1];
    let c3 = a[2];

    var q1: vec3<f32>;
    var r11: f32;
    let un1 = cm_unit_and_norm(c1);
    if (un1.ok) {
        q1 = un1.u;
        r11 = un1.n;
    } else {
        let un2 = cm_unit_and_norm(c2);
        if (un2.ok) {
            q1 = cm_orthogonal_unit(un2.u);
        } else {
            q1 = vec3<f32>(1.0, 0.0, 0.0);
        }
        r11 = cm_norm(c1);
    }

    var r12 = cm_dot(q1, c2);
    var w = c2 - q1 * r12;
    var prev = cm_robust_norm(c2);
    var clean = false;
    for (var it = 0u; it < CM_REORTH_PASSES; it++) {
        let n = cm_robust_norm(w);
        if (n + n >= prev) {
            clean = true;
            break;
        }
        let corr = cm_dot(q1, w);
        r12 += corr;
        w -= q1 * corr;
        prev = n;
    }

    var q2: vec3<f32>;
    var r22: f32;
    let un = cm_unit_and_norm(w);
    if (un.ok && clean) {
        q2 = un.u;
        r22 = un.n;
    } else if (cm_vec_is_finite(w)) {
        // w is zero or rounding noise of c2 along q1: any unit vector orthogonal to q1.
        q2 = cm_orthogonal_unit(q1);
        r22 = 0.0;
    } else {
        q2 = cm_orthogonal_unit(q1);
        r22 = cm_norm(w);
    }

    let q3 = cm_cross(q1, q2);
    // CPU R rows [[r11, r12, q1·c3], [0, r22, q2·c3], [0, 0, q3·c3]], stored here by columns.
    return Qr3(
        mat3x3<f32>(q1, q2, q3),
        mat3x3<f32>(
            vec3<f32>(r11, 0.0, 0.0),
            vec3<f32>(r12, r22, 0.0),
            vec3<f32>(cm_dot(q1, c3), cm_dot(q2, c3), cm_dot(q3, c3)),
        ),
    );
}

// ---------------------------------------------------------------------------------------------
// Signed SVD (math/svd.rs `svd3`, Jacobi helpers of math/eigen.rs; spec §4.6, §5.4).
// ---------------------------------------------------------------------------------------------

// `a = U diag(sigma) Vᵀ`, U, V ∈ SO(3), σ1 ≥ σ2 ≥ |σ3|, σ3 < 0 iff det a < 0.
struct Svd3 {
    U: mat3x3<f32>,
    sigma: vec3<f32>,
    V: mat3x3<f32>,
}

// math/eigen.rs `jacobi_rotation`: (c, s, t) of the rotation zeroing g in [[a, g], [g, b]].
fn cm_jacobi_rotation(a: f32, b: f32, g: f32) -> vec3<f32> {
    let zeta = (b - a) / (2.0 * g);
    var t: f32;
    if (abs(zeta) > CM_JACOBI_BIG) {
        t = 0.5 / zeta;
    } else {
        let sgn = select(-1.0, 1.0, zeta >= 0.0);
        t = sgn / (abs(zeta) + sqrt(1.0 + zeta * zeta));
    }
    let c = 1.0 / sqrt(1.0 + t * t);
    return vec3<f32>(c, c * t, t);
}

// math/eigen.rs `rotate_cols`: column p ← c·xp − s·xq, column q ← s·xp + c·xq.
fn cm_rotate_cols(m: ptr<function, mat3x3<f32>>, p: u32, q: u32, c: f32, s: f32) {
    let xp = (*m)[p];
    let xq = (*m)[q];
    (*m)[p] = c * xp - s * xq;
    (*m)[q] = s * xp + c * xq;
}

// math/eigen.rs `swap_cols_proper`: swap columns i, j and negate the new column j (det unchanged).
fn cm_swap_cols_proper(m: ptr<function, mat3x3<f32>>, i: u32, j: u32) {
    let xi = (*m)[i];
    (*m)[i] = (*m)[j];
    (*m)[j] = -xi;
}

// One pair (p, q) of a one-sided Jacobi sweep of `svd3`; returns whether it rotated.
fn cm_svd_pair(b: ptr<function, mat3x3<f32>>, v: ptr<function, mat3x3<f32>>, p: u32, q: u32) -> bool {
    let bp = (*b)[p];
    let bq = (*b)[q];
    let alpha = cm_norm2(bp);
    let beta = cm_norm2(bq);
    let gamma = cm_dot(bp, bq);
    if (abs(gamma) <= CM_SVD_TOL * sqrt(alpha) * sqrt(beta) || min(alpha, beta) <= CM_SVD_FLOOR) {
        return false;
    }
    let r = cm_jacobi_rotation(alpha, beta, gamma);
    cm_rotate_cols(b, p, q, r.x, r.y);
    cm_rotate_cols(v, p, q, r.x, r.y);
    return true;
}

// One comparator of the descending three-element sorting network of `svd3`.
fn cm_svd_sort_step(
    len2: ptr<function, vec3<f32>>,
    b: ptr<function, mat3x3<f32>>,
    v: ptr<function, mat3x3<f32>>,
    i: u32,
    j: u32,
) {
    if ((*len2)[j] > (*len2)[i]) {
        let li = (*len2)[i];
        (*len2)[i] = (*len2)[j];
        (*len2)[j] = li;
        cm_swap_cols_proper(b, i, j);
        cm_swap_cols_proper(v, i, j);
    }
}

// math/svd.rs `svd3`: scale by the largest entry, cyclic one-sided Jacobi (pairs (0,1), (0,2),
// (1,2), at most CM_MAX_SWEEPS sweeps, orthogonal at |γ| ≤ 2ε|b_p||b_q|, columns below ε⁴ left
// alone), sort by column length with proper swaps, `B = U R` by `qr3`, σ = diag(R) with the
// rounding fix-ups σ2 ≤ σ1, |σ3| ≤ σ2. Zero input: U = V = I, σ = 0; non-finite: σ = NaN.
fn svd3(a: mat3x3<f32>) -> Svd3 {
    let id = cm_identity();
    if (!cm_mat_is_finite(a)) {
        return Svd3(id, vec3<f32>(cm_nan_like(a[0].x)), id);
    }
    let scale = cm_mat_max_abs(a);
    if (scale <= 0.0) {
        return Svd3(id, vec3<f32>(0.0), id);
    }
    var b = mat3x3<f32>(a[0] / scale, a[1] / scale, a[2] / scale);
    var v = id;
    for (var sweep = 0u; sweep < CM_MAX_SWEEPS; sweep++) {
        var rotated = false;
        if (cm_svd_pair(&b, &v, 0u, 1u)) {
            rotated = true;
        }
        if (cm_svd_pair(&b, &v, 0u, 2u)) {
            rotated = true;
        }
        if (cm_svd_pair(&b, &v, 1u, 2u)) {
            rotated = true;
        }
        if (!rotated) {
            break;
        }
    }

    var len2 = vec3<f32>(cm_norm2(b[0]), cm_norm2(b[1]), cm_norm2(b[2]));
    cm_svd_sort_step(&len2, &b, &v, 0u, 1u);
    cm_svd_sort_step(&len2, &b, &v, 1u, 2u);
    cm_svd_sort_step(&len2, &b, &v, 0u, 1u);

    let f = qr3(b);
    let s1 = f.R[0][0];
    let s2 = min(f.R[1][1], s1);
    let s3 = min(max(f.R[2][2], -s2), s2);
    return Svd3(f.Q, vec3<f32>(s1, s2, s3) * scale, v);
}

// `Svd3::recompose`: U diag(s) Vᵀ (column k of U scaled by s[k], then the CPU matrix product).
fn cm_recompose(d: Svd3, s: vec3<f32>) -> mat3x3<f32> {
    let us = mat3x3<f32>(d.U[0] * s.x, d.U[1] * s.y, d.U[2] * s.z);
    return cm_mul(us, transpose(d.V));
}

// math/svd.rs `polar3(a).0` = U Vᵀ.
fn cm_polar3_rotation(a: mat3x3<f32>) -> mat3x3<f32> {
    let d = svd3(a);
    return cm_mul(d.U, transpose(d.V));
}

// math/polar.rs `polar_rotation`: scaled Newton X ← ½(γX + cof(X)/(γ det X)), γ = |det X|^(-1/3),
// stopping at a change ≤ 16ε; inverted, nearly singular (det ≤ 1e-3·max|a|³), non-finite or
// non-converging input falls back to the SVD rotation.
fn cm_polar_rotation(a: mat3x3<f32>) -> mat3x3<f32> {
    let scale = cm_mat_max_abs(a);
    if (!cm_is_finite(scale) || scale <= 0.0) {
        return cm_polar3_rotation(a);
    }
    let det = cm_det(a);
    if (!cm_is_finite(det) || det <= CM_POLAR_DET_FLOOR * scale * scale * scale) {
        return cm_polar3_rotation(a);
    }
    var x = a;
    var d = det;
    for (var it = 0u; it < CM_POLAR_MAX_ITERS; it++) {
        let gamma = cm_exp(cm_ln(abs(d)) * CM_MINUS_THIRD);
        let next = (x * gamma + cm_cofactor(x) * (1.0 / (gamma * d))) * 0.5;
        let change = cm_mat_max_abs(next - x);
        x = next;
        if (change <= CM_POLAR_TOL) {
            return x;
        }
        d = cm_det(x);
        if (!cm_is_finite(d) || d <= 0.0) {
            break;
        }
    }
    return cm_polar3_rotation(a);
}

// ---------------------------------------------------------------------------------------------
// Volumetric particles (type i, spec §4.6, §5.4): corotated, Hencky, sand, goo.
// ---------------------------------------------------------------------------------------------

// constitutive/corotated.rs `corotated_piola`: P = 2μ(F − R) + λ(J − 1) cof(F).
fn cm_corotated_piola(f: mat3x3<f32>, mu: f32, lambda: f32) -> mat3x3<f32> {
    let r = cm_polar_rotation(f);
    let j = cm_det(f);
    return (f - r) * (2.0 * mu) + cm_cofactor(f) * (lambda * (j - 1.0));
}

// constitutive/hencky.rs `hencky_strain`: ε_i = ln max(|σ_i|, 1e-4) and the signed clamped σ̄_i.
struct CmHencky {
    eps: vec3<f32>,
    sbar: vec3<f32>,
}

fn cm_hencky_strain(sigma: vec3<f32>) -> CmHencky {
    var eps: vec3<f32>;
    var sbar: vec3<f32>;
    for (var i = 0u; i < 3u; i++) {
        let s = max(abs(sigma[i]), CM_LOG_CLAMP);
        eps[i] = cm_ln(s);
        sbar[i] = select(s, -s, sigma[i] < 0.0);
    }
    return CmHencky(eps, sbar);
}

// constitutive/hencky.rs `hencky_piola`: P = U diag((2μ ε_i + λ tr ε)/σ̄_i) Vᵀ.
fn cm_hencky_piola(f: mat3x3<f32>, mu: f32, lambda: f32) -> mat3x3<f32> {
    let d = svd3(f);
    let h = cm_hencky_strain(d.sigma);
    let tr = h.eps.x + h.eps.y + h.eps.z;
    let s = (2.0 * mu * h.eps + lambda * tr) / h.sbar;
    return cm_recompose(d, s);
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

// constitutive/mod.rs `drucker_prager_alpha`: sqrt(2/3)·2 sin Φ/(3 − sin Φ).
fn cm_drucker_prager_alpha(friction_angle_rad: f32) -> f32 {
    let s = cm_sincos(friction_angle_rad).x;
    return CM_SQRT_2_3 * 2.0 * s / (3.0 - s);
}

// constitutive/sand.rs `SandParams::alpha`: φ_q = h0 + (h1 q − h3) exp(−h2 q) degrees.
fn cm_sand_alpha(m: PackedMaterial, q: f32) -> f32 {
    let h = m.v[1];
    let phi = h.x + (h.y * q - h.w) * cm_exp(-h.z * q);
    return cm_drucker_prager_alpha(phi * CM_DEG_TO_RAD);
}

// Plastic projection of a volumetric particle: the new F^E and hardening state q.
struct VolumePlastic {
    F: mat3x3<f32>,
    q: f32,
}

// constitutive/sand.rs `sand_return_map` (Klár et al. 2016, spec §5.4): case II expansion
// (tr ε ≥ 0) to the cone tip, case I elastic (δγ ≤ 0; F returned bit for bit unless a σ_i is
// below the 1e-4 clamp), case III projection onto the cone with q += δγ.
fn cm_sand_return_map(m: PackedMaterial, f: mat3x3<f32>, q: f32) -> VolumePlastic {
    let d = svd3(f);
    let eps = cm_hencky_strain(d.sigma).eps;
    let tr = eps.x + eps.y + eps.z;
    if (tr >= 0.0) {
        return VolumePlastic(cm_recompose(d, vec3<f32>(1.0)), q + cm_norm(eps));
    }
    let third = tr / 3.0;
    let e = eps - vec3<f32>(third);
    let e_norm = cm_norm(e);
    let alpha = cm_sand_alpha(m, q);
    let coef = m.v[2].x; // (3λ + 2μ)/(2μ), host-computed
    let dgamma = e_norm + coef * tr * alpha;
    // The CPU's `!is_positive(δγ)` also routes a NaN δγ (μ = 0) here: that is `no_flow`.
    if (m.v[2].y != 0.0 || !(dgamma > 0.0) || e_norm <= 0.0) {
        if (min(min(d.sigma.x, d.sigma.y), d.sigma.z) >= CM_LOG_CLAMP) {
            return VolumePlastic(f, q);
        }
        return VolumePlastic(cm_recompose(d, vec3<f32>(cm_exp(eps.x), cm_exp(eps.y), cm_exp(eps.z))), q);
    }
    let h = eps - e * (dgamma / e_norm);
    return VolumePlastic(cm_recompose(d, vec3<f32>(cm_exp(h.x), cm_exp(h.y), cm_exp(h.z))), q + dgamma);
}

// constitutive/goo.rs `goo_return_map`: relax the deviatoric Hencky strain beyond the von Mises
// yield strain by exp(−μ dt/η) (η = 0: onto the yield surface); at or below yield, or μ ≤ 0, F is
// returned bit for bit.
fn cm_goo_return_map(m: PackedMaterial, f: mat3x3<f32>, dt: f32) -> mat3x3<f32> {
    let mu = m.v[0].y;
    if (!(mu > 0.0)) {
        return f;
    }
    let d = svd3(f);
    let eps = cm_hencky_strain(d.sigma).eps;
    let third = (eps.x + eps.y + eps.z) / 3.0;
    let e = eps - vec3<f32>(third);
    let e_norm = cm_norm(e);
    let e_yield = m.v[1].z; // sqrt(2/3) τ_Y/(2μ), host-computed
    if (!(e_norm - e_yield > 0.0)) {
        return f;
    }
    let viscosity = m.v[1].y;
    var decay = 0.0;
    if (viscosity > 0.0) {
        decay = cm_exp(-mu * dt / viscosity);
    }
    let goal = e_yield + (e_norm - e_yield) * decay;
    let scale = goal / e_norm;
    let h = vec3<f32>(third) + e * scale;
    return cm_recompose(d, vec3<f32>(cm_exp(h.x), cm_exp(h.y), cm_exp(h.z)));
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

// ---------------------------------------------------------------------------------------------
// Codimensional elements (type iii, spec §4.1–§4.4, §5.1, §5.2): surfaces and curves on the QR
// factor R̃ of F̃ = Q R̃. CPU entries r_ij (one-based, row-major) are WGSL R[j-1][i-1].
// ---------------------------------------------------------------------------------------------

// First Piola–Kirchhoff stress in the rest frame; ok = 0 where the CPU returns None (degenerate).
struct CodimPiola {
    P: mat3x3<f32>,
    ok: u32,
}

// Return-mapped F̃ and the `ReturnEvent` discriminant (CM_EVENT_*).
struct CodimReturn {
    F: mat3x3<f32>,
    event: u32,
}

// constitutive/mod.rs `qr_unusable`: !(r11 ≥ eps && r22 ≥ eps) or a non-finite R̃.
fn cm_qr_unusable(qr: Qr3, eps: f32) -> bool {
    return !(qr.R[0][0] >= eps && qr.R[1][1] >= eps) || !cm_mat_is_finite(qr.R);
}

// constitutive/mod.rs `piola_from_a`: P̃ = Q Yᵀ with Y = R̃⁻¹A by back-substitution, the last row
// of Y given analytically as g3 (no 1/r33). Only rows 0 and 1 of the symmetric A are read.
fn cm_piola_from_a(qr: Qr3, a_row0: vec3<f32>, a_row1: vec3<f32>, g3: vec3<f32>) -> mat3x3<f32> {
    let r11 = qr.R[0][0];
    let r12 = qr.R[1][0];
    let r13 = qr.R[2][0];
    let r22 = qr.R[1][1];
    let r23 = qr.R[2][1];
    let y2 = g3;
    let y1 = (a_row1 - r23 * y2) / r22;
    let y0 = (a_row0 - r12 * y1 - r13 * y2) / r11;
    // P[i][j] = Σ_k Q[i][k] Y[j][k]: column j of P is Q·y_j.
    return mat3x3<f32>(cm_mul_vec(qr.Q, y0), cm_mul_vec(qr.Q, y1), cm_mul_vec(qr.Q, y2));
}

// constitutive/surface.rs `in_plane_rotation`: (cos θ, sin θ) of θ = atan2(−r12, r11 + r22).
fn cm_in_plane_rotation(r11: f32, r12: f32, r22: f32) -> vec2<f32> {
    let x = r11 + r22;
    let y = -r12;
    let n = cm_hypot(x, y);
    if (n > 0.0) {
        return vec2<f32>(x / n, y / n);
    }
    return vec2<f32>(1.0, 0.0);
}

// constitutive/surface.rs `normal_energy(k, r33).1`: f'(r33) = −k(1 − r33)² for r33 ≤ 1, else 0.
fn cm_surface_normal_force(k: f32, r33: f32) -> f32 {
    if (r33 <= 1.0) {
        let d = 1.0 - r33;
        return -k * d * d;
    }
    return 0.0;
}

// constitutive/surface.rs `surface_piola` (`surface_a` + `piola_from_a`, spec §4.2, §4.3).
fn cm_surface_piola(m: PackedMaterial, f: mat3x3<f32>) -> CodimPiola {
    let qr = qr3(f);
    if (cm_qr_unusable(qr, m.v[2].x)) {
        return CodimPiola(mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0)), 0u);
    }
    let mu = m.v[0].y;
    let lambda = m.v[0].z;
    let g = m.v[0].w;
    let k = m.v[1].x;
    let r11 = qr.R[0][0];
    let r12 = qr.R[1][0];
    let r13 = qr.R[2][0];
    let r22 = qr.R[1][1];
    let r23 = qr.R[2][1];
    let r33 = qr.R[2][2];
    let cs = cm_in_plane_rotation(r11, r12, r22);
    let c = cs.x;
    let s = cs.y;
    let two_mu = 2.0 * mu;
    let jin = r11 * r22;
    let vol = lambda * (jin - 1.0) * jin;
    let t00 = two_mu * ((r11 - c) * r11 + (r12 + s) * r12) + vol;
    let t01 = two_mu * (r12 + s) * r22;
    let t11 = two_mu * (r22 - c) * r22 + vol;
    let a02 = g * r33 * r13;
    let a12 = g * r33 * r23;
    let a00 = t00 + g * r13 * r13;
    let a01 = t01 + g * r13 * r23;
    let a11 = t11 + g * r23 * r23;
    let g3 = vec3<f32>(g * r13, g * r23, cm_surface_normal_force(k, r33));
    let p = cm_piola_from_a(qr, vec3<f32>(a00, a01, a02), vec3<f32>(a01, a11, a12), g3);
    return CodimPiola(p, 1u);
}

// constitutive/surface.rs `surface_return_map(.., clamp_inverted = false)` with
// `surface_project_r` (spec §5.1): tension r33 > 1 → (0, 0, 1); inverted r33 < 0 → shear zeroed;
// else Coulomb cone γ|s| ≤ c_F k (1 − r33)². Only the normal column of F̃ changes.
fn cm_surface_return_map(m: PackedMaterial, f: mat3x3<f32>) -> CodimReturn {
    let qr = qr3(f);
    if (cm_qr_unusable(qr, m.v[2].x) || !cm_mat_is_finite(f)) {
        return CodimReturn(f, CM_EVENT_DEGENERATE);
    }
    let g = m.v[0].w;
    let k = m.v[1].x;
    let c_f = m.v[1].y;
    let r13 = qr.R[2][0];
    let r23 = qr.R[2][1];
    let r33 = qr.R[2][2];
    var n = vec3<f32>(r13, r23, r33); // projected (r13, r23, r33)
    var event = CM_EVENT_ELASTIC;
    if (r33 > 1.0) {
        n = vec3<f32>(0.0, 0.0, 1.0);
        event = CM_EVENT_TENSION;
    } else if (r33 < 0.0) {
        n = vec3<f32>(0.0, 0.0, r33);
        event = CM_EVENT_INVERTED;
    } else if (g != 0.0) {
        let ff = g * cm_hypot(r13, r23);
        let d = 1.0 - r33;
        let limit = c_f * k * d * d;
        if (ff > limit) {
            let s = limit / ff;
            n = vec3<f32>(s * r13, s * r23, r33);
            event = CM_EVENT_SLIDE;
        }
    }
    if (event == CM_EVENT_ELASTIC) {
        return CodimReturn(f, event);
    }
    var out = f;
    out[2] = cm_mul_vec(qr.Q, n);
    return CodimReturn(out, event);
}

// math/mat2.rs `Svd2`: m = rot(φ) diag(σ1, σ2) rot(θ). 2×2 matrices are vec4 (m00, m01, m10, m11).
struct CmSvd2 {
    phi: f32,
    sigma1: f32,
    sigma2: f32,
    theta: f32,
}

// math/mat2.rs `svd2_signed` (spec Appendix A.2).
fn cm_svd2_signed(m: vec4<f32>) -> CmSvd2 {
    let e = (m.x + m.w) * 0.5;
    let f = (m.x - m.w) * 0.5;
    let g = (m.z + m.y) * 0.5;
    let h = (m.z - m.y) * 0.5;
    let q = cm_hypot(e, h);
    let r = cm_hypot(f, g);
    let a1 = cm_atan2(g, f);
    let a2 = cm_atan2(h, e);
    return CmSvd2((a2 + a1) * 0.5, q + r, q - r, (a2 - a1) * 0.5);
}

// math/mat2.rs `rot2`: [[cos, −sin], [sin, cos]].
fn cm_rot2(angle: f32) -> vec4<f32> {
    let sc = cm_sincos(angle);
    return vec4<f32>(sc.y, -sc.x, sc.x, sc.y);
}

// math/mat2.rs `mat2_mul`.
fn cm_mat2_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(
        a.x * b.x + a.y * b.z,
        a.x * b.y + a.y * b.w,
        a.z * b.x + a.w * b.z,
        a.z * b.y + a.w * b.w,
    );
}

// math/mat2.rs `Svd2::recompose`: rot(φ) diag(s1, s2) rot(θ).
fn cm_svd2_recompose(d: CmSvd2, s1: f32, s2: f32) -> vec4<f32> {
    let u = cm_rot2(d.phi);
    let us = vec4<f32>(u.x * s1, u.y * s2, u.z * s1, u.w * s2);
    return cm_mat2_mul(us, cm_rot2(d.theta));
}

// constitutive/curve.rs `curve_piola` (`curve_a_and_grad` + `piola_from_a`, spec §4.2, §4.4).
fn cm_curve_piola(m: PackedMaterial, f: mat3x3<f32>) -> CodimPiola {
    let qr = qr3(f);
    if (cm_qr_unusable(qr, m.v[2].x)) {
        return CodimPiola(mat3x3<f32>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0)), 0u);
    }
    let mu = m.v[0].y;
    let lambda = m.v[0].z;
    let g = m.v[0].w;
    let k = m.v[1].x;
    let r11 = qr.R[0][0];
    let r12 = qr.R[1][0];
    let r13 = qr.R[2][0];
    let r22 = qr.R[1][1];
    let r23 = qr.R[2][1];
    let r32 = qr.R[1][2];
    let r33 = qr.R[2][2];
    // `cross_strain(cross_block(r))`: signed SVD of R_3 = [[r22, r23], [r32, r33]], clamped logs.
    let svd = cm_svd2_signed(vec4<f32>(r22, r23, r32, r33));
    let sb0 = max(svd.sigma1, CM_LOG_CLAMP);
    let sb1 = max(svd.sigma2, CM_LOG_CLAMP);
    let e0 = cm_ln(sb0);
    let e1 = cm_ln(sb1);
    let tr = e0 + e1;
    let tau0 = 2.0 * mu * e0 + lambda * tr;
    let tau1 = 2.0 * mu * e1 + lambda * tr;
    let dh0 = tau0 / sb0;
    let dh1 = tau1 / sb1;
    let grad = cm_svd2_recompose(svd, dh0, dh1);
    let u = cm_rot2(svd.phi);
    let d0 = dh0 * svd.sigma1;
    let d1 = dh1 * svd.sigma2;
    let t00 = d0 * u.x * u.x + d1 * u.y * u.y;
    let t01 = d0 * u.x * u.z + d1 * u.y * u.w;
    let t11 = d0 * u.z * u.z + d1 * u.w * u.w;
    let a00 = k * (r11 - 1.0) * r11 + g * (r12 * r12 + r13 * r13);
    let a01 = g * (r22 * r12 + r23 * r13);
    let a02 = g * r33 * r13;
    // Last row of R̃⁻¹A: (γ r13, ∂h/∂r23, ∂h/∂r33) = (γ r13, grad[0][1], grad[1][1]).
    let g3 = vec3<f32>(g * r13, grad.y, grad.w);
    let p = cm_piola_from_a(qr, vec3<f32>(a00, a01, a02), vec3<f32>(a01, t00, t01), g3);
    return CodimPiola(p, 1u);
}

// constitutive/curve.rs `curve_return_map` with `curve_project_r` (spec §5.2, §5.5): step 1 the
// cross-section Drucker–Prager (tension reset, projection, clamp rebuild, inverted rebuild),
// step 2 fibre friction with the projected R_3. Event priority Inverted > Tension > Slide >
// Elastic; the tangent column of F̃ never changes.
fn cm_curve_return_map(m: PackedMaterial, f: mat3x3<f32>) -> CodimReturn {
    let qr = qr3(f);
    if (cm_qr_unusable(qr, m.v[2].x) || !cm_mat_is_finite(f)) {
        return CodimReturn(f, CM_EVENT_DEGENERATE);
    }
    let mu = m.v[0].y;
    let lambda = m.v[0].z;
    let g = m.v[0].w;
    let alpha = m.v[1].y;
    let beta = m.v[1].z;
    let coef = m.v[1].w; // (λ + μ)/μ, host-computed
    let r12 = qr.R[1][0];
    let r13 = qr.R[2][0];
    let r22 = qr.R[1][1];
    let r23 = qr.R[2][1];
    let r32 = qr.R[1][2];
    let r33 = qr.R[2][2];

    let r3_hat = vec4<f32>(r22, r23, r32, r33);
    let svd = cm_svd2_signed(r3_hat);
    let e_hat = vec2<f32>(cm_ln(max(svd.sigma1, CM_LOG_CLAMP)), cm_ln(max(svd.sigma2, CM_LOG_CLAMP)));
    let inverted = svd.sigma2 < 0.0;
    let clamped = svd.sigma1 < CM_LOG_CLAMP || svd.sigma2 < CM_LOG_CLAMP;
    let tr = e_hat.x + e_hat.y;

    // Step 1: cross-section.
    var event = CM_EVENT_ELASTIC;
    var eps = e_hat;
    if (tr >= 0.0) {
        eps = vec2<f32>(0.0);
        event = CM_EVENT_TENSION;
    } else if (mu > 0.0) {
        let e_norm = abs(e_hat.x - e_hat.y) / CM_SQRT2;
        let dgamma = e_norm + coef * tr * alpha;
        if (dgamma > 0.0 && e_norm > 0.0) {
            let shift = dgamma / e_norm;
            let half_tr = 0.5 * tr;
            eps = vec2<f32>(e_hat.x - shift * (e_hat.x - half_tr), e_hat.y - shift * (e_hat.y - half_tr));
            event = CM_EVENT_SLIDE;
        }
    }
    var r3 = r3_hat;
    if (!(event == CM_EVENT_ELASTIC && !clamped)) {
        if (event == CM_EVENT_ELASTIC) {
            event = CM_EVENT_SLIDE; // clamp-only change of a collapsed cross-section
        }
        r3 = cm_svd2_recompose(svd, cm_exp(eps.x), cm_exp(eps.y));
    }
    if (inverted) {
        event = CM_EVENT_INVERTED;
    }

    // Step 2: friction along the fibre, with the projected R_3.
    let t1 = r12;
    let t2 = r13;
    let big_t = 2.0 * (mu + lambda) * (eps.x + eps.y);
    let rt = vec2<f32>(r3.x * t1 + r3.y * t2, r3.z * t1 + r3.w * t2);
    let sh = g * cm_hypot(rt.x, rt.y);
    var n12 = t1;
    var n13 = t2;
    if (sh > 0.0 && sh + 0.5 * beta * big_t > 0.0) {
        let s = max(-beta * big_t / (2.0 * sh), 0.0);
        n12 = s * t1;
        n13 = s * t2;
        if (event == CM_EVENT_ELASTIC) {
            event = CM_EVENT_SLIDE;
        }
    }
    if (event == CM_EVENT_ELASTIC) {
        return CodimReturn(f, event);
    }
    // Projected R columns 1 and 2 (CPU rows [[r11, n12, n13], [·, r3_00, r3_01], [·, r3_10, r3_11]]).
    var out = f;
    out[1] = cm_mul_vec(qr.Q, vec3<f32>(n12, r3.x, r3.z));
    out[2] = cm_mul_vec(qr.Q, vec3<f32>(n13, r3.y, r3.w));
    return CodimReturn(out, event);
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
