// f32 elementary functions in plain arithmetic: the GPU twin of the platform libm that the CPU
// path calls through `f32::{ln, exp, sin, cos, atan2, hypot}` (`math/mod.rs` `Real`).
//
// The WGSL transcendental builtins only promise loose accuracy (`log`: absolute 2^-21 near 1,
// which is a large *relative* error of a small Hencky strain; `exp`: 3 + 2|x| ULP; `sin`/`cos`:
// absolute 2^-11; `atan2`: 4096 ULP), while the CPU calls the platform libm (≤ 1 ULP). So these are
// ports of fdlibm/Cephes (≤ ~2 ULP) that agree with the CPU to a few ULP on every device.
// Non-finite values are detected on the bit pattern (`cm_is_finite`): WGSL lets implementations
// assume that floats are finite, so `x != x` style tests may be optimised away.

// `f32::is_finite` on the bit pattern (exponent not all ones).
fn cm_is_finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
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
