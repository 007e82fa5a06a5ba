// The regularized incomplete gamma functions P(a, x) = igamma (torch.special.gammainc) and
// Q(a, x) = igammac (gammaincc), and the Airy function Ai (torch.special.airy_ai), with the same
// bits on every CPU and GPU (issue 26).
//
//   double special_igamma(a, x), special_igammac(a, x), special_airy_ai(x)   (float64 definitions;
//   the float32 kernels round the same double result once)
//
// Each is ONE fixed formula of IEEE-754 basic operations (round to nearest even), explicit
// repmode_fma (inside the double-double helpers), and repmode's own exp/expm1/log/erfc/sin/cos/
// sqrt/lgamma (math.h, math_special.h and siblings) — never libm or CUDA math. Loops have a fixed
// maximum count and stop on values only (never on thread count or layout).
//
// igamma/igammac follow the regions of torch's (SciPy/Cephes') calc_igamma/calc_igammac, with
// three changes that make them more accurate (docs/math.md measures both against mpmath):
//  * the prefactor D = x^a e^-x / Gamma(a) is computed from a double-double exponent:
//    a < 12:  a log x - x - lgamma(a), log x and lgamma(a) as double-doubles;
//    a >= 12: a log(x/a) + (a - x) - S(a), S Stirling's series (lgamma(a) = (a - 1/2) log a - a
//             + log(2 pi)/2 + S(a)), times sqrt(a / (2 pi)): no cancellation of large terms;
//    native torch evaluates a log x - x - lgamma(a) in double (errors ~ |lgamma(a)| ulp) or a
//    Lanczos form with pow(x/fac, a) (errors ~ a ulp);
//  * the power series, the continued fraction and the small-x series of Q run in double-double
//    (terms exact to ~2^-100) and stop at 2^-56 relative instead of 2^-53;
//  * Temme's uniform asymptotic expansion (DLMF 8.12; torch's coefficient table) covers
//    a > 20, |x - a| < 0.3 a for every a (torch: for a > 200 only |x - a| < 4.5 sqrt(a), where its
//    series then needs more than its 2000 terms for a beyond ~10^6), with eta^2/2 = -log1pmx(sigma)
//    and a eta^2/2 in double-double, erfc of a double-double argument.
// Special values are torch's (calc_igamma): a < 0 or x < 0 -> NaN; a == 0: x > 0 -> P = 1, Q = 0,
// else NaN; x == 0 -> P = 0, Q = 1; a = +inf: x = +inf -> NaN, else P = 0, Q = 1; x = +inf ->
// P = 1, Q = 0; a or x NaN -> NaN.
#pragma once

#include "math_atan.h"        // dd_sqrt
#include "math_exp_family.h"  // repmode_expm1
#include "math_hyperbolic.h"  // dd_div
#include "math_special.h"
#include "math_trig.h"

namespace repmode {
namespace igamma_detail {

using math_detail::DD;
using math_detail::dd_add;
using math_detail::dd_div;
using math_detail::dd_mul;
using math_detail::dd_mul_d;
using math_detail::atan_detail::dd_sqrt;
using math_detail::fast_two_sum;
using math_detail::two_prod;
using math_detail::two_sum;
using special_detail::dd_neg;
using special_detail::inf64;
using special_detail::is_nan;
using special_detail::log_dd;
using special_detail::log_dd_accurate;

constexpr double kTol = 0x1p-56;  // relative stopping tolerance of every series and fraction
constexpr int kMaxSeries = 1000;  // fixed maximum term counts (measured maxima: docs/math.md)
constexpr int kMaxFraction = 1000;
constexpr double kInvSqrt2Pi = 0x1.9884533d43651p-2;  // 1/sqrt(2 pi)
constexpr double kSqrt2Pi = 0x1.40d931ff62706p+1;
constexpr double kTwoOverSqrtPi = 0x1.20dd750429b6dp+0;

// e^(e.hi + e.lo), |e.lo| <= ulp(e.hi)/2: repmode_exp(hi) (< 0.53 ulp) times 1 + lo.
REPMODE_HD double exp_dd(DD e) {
  double r = repmode_exp(e.hi);
  return r + r * e.lo;
}

// log t for a double t > 0 as a double-double: log_accurate (2^-88 relative) inside
// [2^-255, 2^255], log_fast (2^-57.4) outside.
REPMODE_HD DD log_any(double t) {
  if (t > 0x1p-255 && t < 0x1p255) return log_dd_accurate(DD{t, 0.0});
  return log_dd(t);
}

// Stirling's remainder S(a) = lgamma(a) - ((a - 1/2) log a - a + log(2 pi)/2), a >= 12.
REPMODE_HD double stirling_rest(double a) {
  using special_detail::series;
  using special_detail::stirling_coef;
  double ix = 1.0 / a;
  return ix * series(stirling_coef() + 1, 9, ix * ix) + ix * stirling_coef()[0];
}

// D = x^a e^-x / Gamma(a) for finite a, x > 0; 0 when it is below 2^-1075 / 2 (the callers
// multiply it by factors < 2, see docs/semantics.md).
REPMODE_HD double igam_fac(double a, double x) {
  if (a < 12.0) {
    DD e = dd_add(dd_mul_d(log_any(x), a), DD{-x, 0.0});
    e = dd_add(e, dd_neg(special_detail::lgamma_pos_wide(a)));
    if (!(e.hi > -747.0)) return 0.0;
    return exp_dd(e);
  }
  DD q = dd_div(DD{x, 0.0}, DD{a, 0.0});
  if (!(q.hi > 0x1p-255 && q.hi < 0x1p255)) return 0.0;  // a log(x/a) + a - x < -2000
  DD L = log_dd_accurate(q);
  double est = L.hi * a + (a - x);
  if (!(est > -800.0)) return 0.0;  // (also keeps the double-double steps finite)
  DD e = dd_add(dd_mul_d(L, a), two_sum(a, -x));
  e = dd_add(e, DD{-stirling_rest(a), 0.0});
  if (!(e.hi > -747.0)) return 0.0;
  return exp_dd(e) * (repmode_sqrt(a) * kInvSqrt2Pi);
}

// P(a, x) by its power series (DLMF 8.11.4): P = D/a * sum_(k>=0) x^k / ((a+1)...(a+k)), each
// term c_k = c_(k-1) x / (a + k) in double-double (a + k exact by two_sum), the sum in
// double-double, stopped at the first term <= 2^-56 of the sum (at most kMaxSeries terms).
REPMODE_HD double igam_series(double a, double x) {
  double d = igam_fac(a, x);
  if (d == 0.0) return 0.0;
  DD c = {1.0, 0.0}, s = {1.0, 0.0};
  for (int k = 1; k <= kMaxSeries; ++k) {
    c = dd_div(dd_mul_d(c, x), two_sum(a, double(k)));
    s = dd_add(s, c);
    if (c.hi <= kTol * s.hi) break;
  }
  return ((s.hi + s.lo) * d) / a;
}

// Q(a, x) by Cephes' continued fraction (DLMF 8.9.2, torch's _igamc_helper_continued_fraction):
// the convergents p_k / q_k by the three-term recurrences, every quantity a double-double
// (z_k = x - a + 2 + 2k, y_k k = (1 - a + k) k formed exactly), p and q rescaled by 2^-52
// (exact) when |p_k| > 2^52; stopped when the convergent moves by <= 2^-56 of itself (at most
// kMaxFraction steps). Q = D * p/q.
REPMODE_HD double igamc_fraction(double a, double x) {
  double d = igam_fac(a, x);
  if (d == 0.0) return 0.0;
  DD xma = two_sum(x, -a);
  DD pkm2 = {1.0, 0.0}, qkm2 = {x, 0.0};
  DD pkm1 = two_sum(x, 1.0);
  DD qkm1 = dd_mul_d(dd_add(xma, DD{2.0, 0.0}), x);
  DD ans = dd_div(pkm1, qkm1);
  for (int k = 1; k <= kMaxFraction; ++k) {
    double kk = double(k);
    DD z = dd_add(xma, DD{2.0 + 2.0 * kk, 0.0});
    DD yc = dd_mul_d(two_sum(1.0 + kk, -a), kk);
    DD pk = dd_add(dd_mul(pkm1, z), dd_neg(dd_mul(pkm2, yc)));
    DD qk = dd_add(dd_mul(qkm1, z), dd_neg(dd_mul(qkm2, yc)));
    double t = 1.0;
    if (qk.hi != 0.0) {
      DD r = dd_div(pk, qk);
      double diff = (ans.hi - r.hi) + (ans.lo - r.lo);
      t = (diff < 0.0 ? -diff : diff) / (r.hi < 0.0 ? -r.hi : r.hi);
      ans = r;
    }
    pkm2 = pkm1;
    pkm1 = pk;
    qkm2 = qkm1;
    qkm1 = qk;
    double ap = pk.hi < 0.0 ? -pk.hi : pk.hi;
    if (ap > 0x1p52) {
      const double s = 0x1p-52;
      pkm2 = DD{pkm2.hi * s, pkm2.lo * s};
      pkm1 = DD{pkm1.hi * s, pkm1.lo * s};
      qkm2 = DD{qkm2.hi * s, qkm2.lo * s};
      qkm1 = DD{qkm1.hi * s, qkm1.lo * s};
    }
    if (t <= kTol) break;
  }
  return d * ans.hi + d * ans.lo;
}

// lgamma(1 + a) for a > 0 as a double-double, a exact: lgamma1 (|a| <= 1/4), lgamma2 of a - 1
// (exact for 1/2 <= a <= 7/4), else lgamma(a) + log a.
REPMODE_HD DD lgamma1p_dd(double a) {
  if (a <= 0.25) return special_detail::lgamma1_wide(a);
  if (a >= 0.5 && a <= 1.75) return special_detail::lgamma2_wide(a - 1.0);
  return dd_add(special_detail::lgamma_pos_wide(a), log_dd(a));
}

// Q(a, x) for small x by DLMF 8.7.3 (torch's _igamc_helper_series): Q = -expm1(a log x -
// lgamma(1 + a)) - x^a / Gamma(a) * sum_(n>=1) (-x)^n / (n! (a + n)); the sum in double-double
// (stopped at the first term <= 2^-56 of the sum, at most kMaxSeries terms), both exponents
// double-doubles.
REPMODE_HD double igamc_series(double a, double x) {
  DD f = {1.0, 0.0}, s = {0.0, 0.0};
  for (int n = 1; n <= kMaxSeries; ++n) {
    f = dd_div(dd_mul_d(f, -x), DD{double(n), 0.0});
    DD term = dd_div(f, two_sum(a, double(n)));
    s = dd_add(s, term);
    double at = term.hi < 0.0 ? -term.hi : term.hi;
    double as = s.hi < 0.0 ? -s.hi : s.hi;
    if (at <= kTol * as) break;
  }
  DD alx = dd_mul_d(log_any(x), a);
  DD y = dd_add(alx, dd_neg(lgamma1p_dd(a)));
  double e1 = repmode_expm1(y.hi);
  double lead = -(e1 + (1.0 + e1) * y.lo);
  double g = exp_dd(dd_add(alx, dd_neg(special_detail::lgamma_pos_wide(a))));
  return lead - g * (s.hi + s.lo);
}

// Temme's coefficients d[k][n] (DLMF 8.12.9), SciPy's and torch's table.
REPMODE_HD const double* temme_coef() {
  // clang-format off
  static constexpr double k[25][25] = {
      {-3.3333333333333333e-1, 8.3333333333333333e-2, -1.4814814814814815e-2, 1.1574074074074074e-3, 3.527336860670194e-4, -1.7875514403292181e-4, 3.9192631785224378e-5, -2.1854485106799922e-6, -1.85406221071516e-6, 8.296711340953086e-7, -1.7665952736826079e-7, 6.7078535434014986e-9, 1.0261809784240308e-8, -4.3820360184533532e-9, 9.1476995822367902e-10, -2.551419399494625e-11, -5.8307721325504251e-11, 2.4361948020667416e-11, -5.0276692801141756e-12, 1.1004392031956135e-13, 3.3717632624009854e-13, -1.3923887224181621e-13, 2.8534893807047443e-14, -5.1391118342425726e-16, -1.9752288294349443e-15},
      {-1.8518518518518519e-3, -3.4722222222222222e-3, 2.6455026455026455e-3, -9.9022633744855967e-4, 2.0576131687242798e-4, -4.0187757201646091e-7, -1.8098550334489978e-5, 7.6491609160811101e-6, -1.6120900894563446e-6, 4.6471278028074343e-9, 1.378633446915721e-7, -5.752545603517705e-8, 1.1951628599778147e-8, -1.7543241719747648e-11, -1.0091543710600413e-9, 4.1627929918425826e-10, -8.5639070264929806e-11, 6.0672151016047586e-14, 7.1624989648114854e-12, -2.9331866437714371e-12, 5.9966963656836887e-13, -2.1671786527323314e-16, -4.9783399723692616e-14, 2.0291628823713425e-14, -4.13125571381061e-15},
      {4.1335978835978836e-3, -2.6813271604938272e-3, 7.7160493827160494e-4, 2.0093878600823045e-6, -1.0736653226365161e-4, 5.2923448829120125e-5, -1.2760635188618728e-5, 3.4235787340961381e-8, 1.3721957309062933e-6, -6.298992138380055e-7, 1.4280614206064242e-7, -2.0477098421990866e-10, -1.4092529910867521e-8, 6.228974084922022e-9, -1.3670488396617113e-9, 9.4283561590146782e-13, 1.2872252400089318e-10, -5.5645956134363321e-11, 1.1975935546366981e-11, -4.1689782251838635e-15, -1.0940640427884594e-12, 4.6622399463901357e-13, -9.905105763906906e-14, 1.8931876768373515e-17, 8.8592218725911273e-15},
      {6.4943415637860082e-4, 2.2947209362139918e-4, -4.6918949439525571e-4, 2.6772063206283885e-4, -7.5618016718839764e-5, -2.3965051138672967e-7, 1.1082654115347302e-5, -5.6749528269915966e-6, 1.4230900732435884e-6, -2.7861080291528142e-11, -1.6958404091930277e-7, 8.0994649053880824e-8, -1.9111168485973654e-8, 2.3928620439808118e-12, 2.0620131815488798e-9, -9.4604966618551322e-10, 2.1541049775774908e-10, -1.388823336813903e-14, -2.1894761681963939e-11, 9.7909989511716851e-12, -2.1782191880180962e-12, 6.2088195734079014e-17, 2.126978363279737e-13, -9.3446887915174333e-14, 2.0453671226782849e-14},
      {-8.618882909167117e-4, 7.8403922172006663e-4, -2.9907248030319018e-4, -1.4638452578843418e-6, 6.6414982154651222e-5, -3.9683650471794347e-5, 1.1375726970678419e-5, 2.5074972262375328e-10, -1.6954149536558306e-6, 8.9075075322053097e-7, -2.2929348340008049e-7, 2.956794137544049e-11, 2.8865829742708784e-8, -1.4189739437803219e-8, 3.4463580499464897e-9, -2.3024517174528067e-13, -3.9409233028046405e-10, 1.8602338968504502e-10, -4.356323005056618e-11, 1.2786001016296231e-15, 4.6792750266579195e-12, -2.1492464706134829e-12, 4.9088156148096522e-13, -6.3385914848915603e-18, -5.0453320690800944e-14},
      {-3.3679855336635815e-4, -6.9728137583658578e-5, 2.7727532449593921e-4, -1.9932570516188848e-4, 6.7977804779372078e-5, 1.419062920643967e-7, -1.3594048189768693e-5, 8.0184702563342015e-6, -2.2914811765080952e-6, -3.252473551298454e-10, 3.4652846491085265e-7, -1.8447187191171343e-7, 4.8240967037894181e-8, -1.7989466721743515e-14, -6.3061945000135234e-9, 3.1624176287745679e-9, -7.8409242536974293e-10, 5.1926791652540407e-15, 9.3589442423067836e-11, -4.5134262161632782e-11, 1.0799129993116827e-11, -3.661886712685252e-17, -1.210902069055155e-12, 5.6807435849905643e-13, -1.3249659916340829e-13},
      {5.3130793646399222e-4, -5.9216643735369388e-4, 2.7087820967180448e-4, 7.9023532326603279e-7, -8.1539693675619688e-5, 5.6116827531062497e-5, -1.8329116582843376e-5, -3.0796134506033048e-9, 3.4651553688036091e-6, -2.0291327396058604e-6, 5.7887928631490037e-7, 2.338630673826657e-13, -8.8286007463304835e-8, 4.7435958880408128e-8, -1.2545415020710382e-8, 8.6496488580102925e-14, 1.6846058979264063e-9, -8.5754928235775947e-10, 2.1598224929232125e-10, -7.6132305204761539e-16, -2.6639822008536144e-11, 1.3065700536611057e-11, -3.1799163902367977e-12, 4.7109761213674315e-18, 3.6902800842763467e-13},
      {3.4436760689237767e-4, 5.1717909082605922e-5, -3.3493161081142236e-4, 2.812695154763237e-4, -1.0976582244684731e-4, -1.2741009095484485e-7, 2.7744451511563644e-5, -1.8263488805711333e-5, 5.7876949497350524e-6, 4.9387589339362704e-10, -1.0595367014026043e-6, 6.1667143761104075e-7, -1.7562973359060462e-7, -1.2974473287015439e-12, 2.695423606288966e-8, -1.4578352908731271e-8, 3.887645959386175e-9, -3.8810022510194121e-17, -5.3279941738772867e-10, 2.7437977643314845e-10, -6.9957960920705679e-11, 2.5899863874868481e-17, 8.8566890996696381e-12, -4.403168815871311e-12, 1.0865561947091654e-12},
      {-6.5262391859530942e-4, 8.3949872067208728e-4, -4.3829709854172101e-4, -6.969091458420552e-7, 1.6644846642067548e-4, -1.2783517679769219e-4, 4.6299532636913043e-5, 4.5579098679227077e-9, -1.0595271125805195e-5, 6.7833429048651666e-6, -2.1075476666258804e-6, -1.7213731432817145e-11, 3.7735877416110979e-7, -2.1867506700122867e-7, 6.2202288040189269e-8, 6.5977038267330006e-16, -9.5903864974256858e-9, 5.2132144922808078e-9, -1.3991589583935709e-9, 5.382058999060575e-16, 1.9484714275467745e-10, -1.0127287556389682e-10, 2.6077347197254926e-11, -5.0904186999932993e-18, -3.3721464474854592e-12},
      {-5.9676129019274625e-4, -7.2048954160200106e-5, 6.7823088376673284e-4, -6.4014752602627585e-4, 2.7750107634328704e-4, 1.8197008380465151e-7, -8.4795071170685032e-5, 6.105192082501531e-5, -2.1073920183404862e-5, -8.8585890141255994e-10, 4.5284535953805377e-6, -2.8427815022504408e-6, 8.7082341778646412e-7, 3.6886101871706965e-12, -1.5344695190702061e-7, 8.862466778790695e-8, -2.5184812301826817e-8, -1.0225912098215092e-14, 3.8969470758154777e-9, -2.1267304792235635e-9, 5.7370135528051385e-10, -1.887749850169741e-19, -8.0931538694657866e-11, 4.2382723283449199e-11, -1.1002224534207726e-11},
      {1.3324454494800656e-3, -1.9144384985654775e-3, 1.1089369134596637e-3, 9.932404122642299e-7, -5.0874501293093199e-4, 4.2735056665392884e-4, -1.6858853767910799e-4, -8.1301893922784998e-9, 4.5284402370562147e-5, -3.127053674781734e-5, 1.044986828530338e-5, 4.8435226265680926e-11, -2.1482565873456258e-6, 1.329369701097492e-6, -4.0295693092101029e-7, -1.7567877666323291e-13, 7.0145043163668257e-8, -4.040787734999483e-8, 1.1474026743371963e-8, 3.9642746853563325e-18, -1.7804938269892714e-9, 9.7480262548731646e-10, -2.6405338676507616e-10, 5.794875163403742e-18, 3.7647749553543836e-11},
      {1.579727660730835e-3, 1.6251626278391582e-4, -2.0633421035543276e-3, 2.1389686185689098e-3, -1.0108559391263003e-3, -3.9912705529919201e-7, 3.6235025084764691e-4, -2.8143901463712154e-4, 1.0449513336495887e-4, 2.1211418491830297e-9, -2.5779417251947842e-5, 1.7281818956040463e-5, -5.6413773872904282e-6, -1.1024320105776174e-11, 1.1223224418895175e-6, -6.8693396379526735e-7, 2.0653236975414887e-7, 4.6714772409838506e-14, -3.5609886164949055e-8, 2.0470855345905963e-8, -5.8091738633283358e-9, -1.332821287582869e-16, 9.0354604391335133e-10, -4.9598782517330834e-10, 1.3481607129399749e-10},
      {-4.0725121195140166e-3, 6.4033628338080698e-3, -4.0410161081676618e-3, -2.183732802866233e-6, 2.1740441801254639e-3, -1.9700440518418892e-3, 8.3595469747962458e-4, 1.9445447567109655e-8, -2.5779387120421696e-4, 1.9009987368139304e-4, -6.7696499937438965e-5, -1.4440629666426572e-10, 1.5712512518742269e-5, -1.0304008744776893e-5, 3.304517767401387e-6, 7.9829760242325709e-13, -6.4097794149313004e-7, 3.8894624761300056e-7, -1.1618347644948869e-7, -2.816808630596451e-15, 1.9878012911297093e-8, -1.1407719956357511e-8, 3.2355857064185555e-9, 4.1759468293455945e-20, -5.0423112718105824e-10},
      {-5.9475779383993003e-3, -5.4016476789260452e-4, 8.7910413550767898e-3, -9.8576315587856125e-3, 5.0134695031021538e-3, 1.2807521786221875e-6, -2.0626019342754683e-3, 1.7109128573523058e-3, -6.7695312714133799e-4, -6.9011545676562133e-9, 1.8855128143995902e-4, -1.3395215663491969e-4, 4.6263183033528039e-5, 4.0034230613321351e-11, -1.0255652921494033e-5, 6.612086372797651e-6, -2.0913022027253008e-6, -2.0951775649603837e-13, 3.9756029041993247e-7, -2.3956211978815887e-7, 7.1182883382145864e-8, 8.925574873053455e-16, -1.2101547235064676e-8, 6.9350618248334386e-9, -1.9661464453856102e-9},
      {1.7402027787522711e-2, -2.9527880945699121e-2, 2.0045875571402799e-2, 7.0289515966903407e-6, -1.2375421071343148e-2, 1.1976293444235254e-2, -5.4156038466518525e-3, -6.3290893396418616e-8, 1.8855118129005065e-3, -1.473473274825001e-3, 5.5515810097708387e-4, 5.2406834412550662e-10, -1.4357913535784836e-4, 9.9181293224943297e-5, -3.3460834749478311e-5, -3.5755837291098993e-12, 7.1560851960630076e-6, -4.5516802628155526e-6, 1.4236576649271475e-6, 1.8803149082089664e-14, -2.6623403898929211e-7, 1.5950642189595716e-7, -4.7187514673841102e-8, -6.5107872958755177e-17, 7.9795091026746235e-9},
      {3.0249124160905891e-2, 2.4817436002649977e-3, -4.9939134373457022e-2, 5.9915643009307869e-2, -3.2483207601623391e-2, -5.7212968652103441e-6, 1.5085251778569354e-2, -1.3261324005088445e-2, 5.5515262632426148e-3, 3.0263182257030016e-8, -1.7229548406756723e-3, 1.2893570099929637e-3, -4.6845138348319876e-4, -1.830259937893045e-10, 1.1449739014822654e-4, -7.7378565221244477e-5, 2.5625836246985201e-5, 1.0766165333192814e-12, -5.3246809282422621e-6, 3.349634863064464e-6, -1.0381253128684018e-6, -5.608909920621128e-15, 1.9150821930676591e-7, -1.1418365800203486e-7, 3.3654425209171788e-8},
      {-9.9051020880159045e-2, 1.7954011706123486e-1, -1.2989606383463778e-1, -3.1478872752284357e-5, 9.0510635276848131e-2, -9.2828824411184397e-2, 4.4412112839877808e-2, 2.7779236316835888e-7, -1.7229543805449697e-2, 1.4182925050891573e-2, -5.6214161633747336e-3, -2.39598509186381e-9, 1.6029634366079908e-3, -1.1606784674435773e-3, 4.1001337768153873e-4, 1.8365800754090661e-11, -9.5844256563655903e-5, 6.3643062337764708e-5, -2.076250624489065e-5, -1.1806020912804483e-13, 4.2131808239120649e-6, -2.6262241337012467e-6, 8.0770620494930662e-7, 6.0125912123632725e-16, -1.4729737374018841e-7},
      {-1.9994542198219728e-1, -1.5056113040026424e-2, 3.6470239469348489e-1, -4.6435192311733545e-1, 2.6640934719197893e-1, 3.4038266027147191e-5, -1.3784338709329624e-1, 1.276467178337056e-1, -5.6213828755200985e-2, -1.753150885483011e-7, 1.9235592956768113e-2, -1.5088821281095315e-2, 5.7401854451350123e-3, 1.0622382710310225e-9, -1.5335082692563998e-3, 1.0819320643228214e-3, -3.7372510193945659e-4, -6.6170909729031985e-12, 8.4263617380909628e-5, -5.5150706827483479e-5, 1.7769536448348069e-5, 3.8827923210205533e-14, -3.53513697488768e-6, 2.1865832130045269e-6, -6.6812849447625594e-7},
      {7.2438608504029431e-1, -1.3918010932653375, 1.0654143352413968, 1.876173868950258e-4, -8.2705501176152696e-1, 8.9352433347828414e-1, -4.4971003995291339e-1, -1.6107401567546652e-6, 1.9235590165271091e-1, -1.6597702160042609e-1, 6.8882222681814333e-2, 1.3910091724608687e-8, -2.146911561508663e-2, 1.6228980898865892e-2, -5.9796016172584256e-3, -1.1287469112826745e-10, 1.5167451119784857e-3, -1.0478634293553899e-3, 3.5539072889126421e-4, 8.1704322111801517e-13, -7.7773013442452395e-5, 5.0291413897007722e-5, -1.6035083867000518e-5, 1.2469354315487605e-14, 3.1369106244517615e-6},
      {1.6668949727276811, 1.165462765994632e-1, -3.3288393225018906, 4.4692325482864037, -2.6977693045875807, -2.600667859891061e-4, 1.5389017615694539, -1.4937962361134612, 6.8881964633233148e-1, 1.3077482004552385e-6, -2.5762963325596288e-1, 2.1097676102125449e-1, -8.3714408359219882e-2, -7.7920428881354753e-9, 2.4267923064833599e-2, -1.7813678334552311e-2, 6.3970330388900056e-3, 4.9430807090480523e-11, -1.5554602758465635e-3, 1.0561196919903214e-3, -3.5277184460472902e-4, 9.3002334645022459e-14, 7.5285855026557172e-5, -4.8186515569156351e-5, 1.5227271505597605e-5},
      {-6.6188298861372935, 1.3397985455142589e+1, -1.0789350606845146e+1, -1.4352254537875018e-3, 9.2333694596189809, -1.0456552819547769e+1, 5.5105526029033471, 1.2024439690716742e-5, -2.5762961164755816, 2.3207442745387179, -1.0045728797216284, -1.0207833290021914e-7, 3.3975092171169466e-1, -2.6720517450757468e-1, 1.0235252851562706e-1, 8.4329730484871625e-10, -2.7998284958442595e-2, 2.0066274144976813e-2, -7.0554368915086242e-3, 1.9402238183698188e-12, 1.6562888105449611e-3, -1.1082898580743683e-3, 3.654545161310169e-4, -5.1290032026971794e-11, -7.6340103696869031e-5},
      {-1.7112706061976095e+1, -1.1208044642899116, 3.7131966511885444e+1, -5.2298271025348962e+1, 3.3058589696624618e+1, 2.4791298976200222e-3, -2.061089403411526e+1, 2.088672775145582e+1, -1.0045703956517752e+1, -1.2238783449063012e-5, 4.0770134274221141, -3.473667358470195, 1.4329352617312006, 7.1359914411879712e-8, -4.4797257159115612e-1, 3.4112666080644461e-1, -1.2699786326594923e-1, -2.8953677269081528e-10, 3.3125776278259863e-2, -2.3274087021036101e-2, 8.0399993503648882e-3, -1.177805216235265e-9, -1.8321624891071668e-3, 1.2108282933588665e-3, -3.9479941246822517e-4},
      {7.389033153567425e+1, -1.5680141270402273e+2, 1.322177542759164e+2, 1.3692876877324546e-2, -1.2366496885920151e+2, 1.4620689391062729e+2, -8.0365587724865346e+1, -1.1259851148881298e-4, 4.0770132196179938e+1, -3.8210340013273034e+1, 1.719522294277362e+1, 9.3519707955168356e-7, -6.2716159907747034, 5.1168999071852637, -2.0319658112299095, -4.9507215582761543e-9, 5.9626397294332597e-1, -4.4220765337238094e-1, 1.6079998700166273e-1, -2.4733786203223402e-8, -4.0307574759979762e-2, 2.7849050747097869e-2, -9.4751858992054221e-3, 6.419922235909132e-6, 2.1250180774699461e-3},
      {2.1216837098382522e+2, 1.3107863022633868e+1, -4.9698285932871748e+2, 7.3121595266969204e+2, -4.8213821720890847e+2, -2.8817248692894889e-2, 3.2616720302947102e+2, -3.4389340280087117e+2, 1.7195193870816232e+2, 1.4038077378096158e-4, -7.52594195897599e+1, 6.651969984520934e+1, -2.8447519748152462e+1, -7.613702615875391e-7, 9.5402237105304373, -7.5175301113311376, 2.8943997568871961, -4.6612194999538201e-7, -8.0615149598794088e-1, 5.8483006570631029e-1, -2.0845408972964956e-1, 1.4765818959305817e-4, 5.1000433863753019e-2, -3.3066252141883665e-2, 1.5109265210467774e-2},
      {-9.8959643098322368e+2, 2.1925555360905233e+3, -1.9283586782723356e+3, -1.5925738122215253e-1, 1.9569985945919857e+3, -2.4072514765081556e+3, 1.3756149959336496e+3, 1.2920735237496668e-3, -7.525941715948055e+2, 7.3171668742208716e+2, -3.4137023466220065e+2, -9.9857390260608043e-6, 1.3356313181291573e+2, -1.1276295161252794e+2, 4.6310396098204458e+1, -7.9237387133614756e-6, -1.4510726927018646e+1, 1.1111771248100563e+1, -4.1690817945270892, 3.1008219800117808e-3, 1.1220095449981468, -7.6052379926149916e-1, 3.6262236505085254e-1, 2.216867741940747e-1, 4.8683443692930507e-1},  };
  // clang-format on
  return &k[0][0];
}

// -log1pmx(sigma) = sigma - log(1 + sigma) = eta^2 / 2 for |sigma| < 0.3 as a double-double:
// |sigma| < 1/64: sigma^2/2 - sum_(k=3..14) (-1)^(k+1) sigma^k / k, all in double-double (the
// result multiplies a up to ~700/eta^2: a double tail would cost ~2^-60 relative, 10 ulp at
// P ~ 1e-272; truncation < 2^-78 relative); else sigma - log(x/a), log_accurate of the double-double
// x/a (2^-88 relative, cancellation < 2^7).
REPMODE_HD DD half_eta_squared(DD sigma, double x, double a) {
  double sg = sigma.hi;
  if ((sg < 0.0 ? -sg : sg) < 0.015625) {
    DD sq = dd_mul(sigma, sigma);
    DD p = dd_div(DD{-1.0, 0.0}, DD{14.0, 0.0});
    for (int k = 13; k >= 3; --k) {
      DD c = dd_div(DD{(k & 1) ? 1.0 : -1.0, 0.0}, DD{double(k), 0.0});
      p = dd_add(dd_mul(p, sigma), c);
    }
    DD tail = dd_mul(p, dd_mul(sq, sigma));
    return dd_add(DD{0.5 * sq.hi, 0.5 * sq.lo}, dd_neg(tail));
  }
  DD L = log_dd_accurate(dd_div(DD{x, 0.0}, DD{a, 0.0}));
  return dd_add(sigma, dd_neg(L));
}

// P (upper = false) or Q (upper = true) by Temme's uniform expansion (DLMF 8.12.3/8.12.4), for
// a > 20 and |x - a| < 0.3 a:
//   Q = erfc(eta sqrt(a/2))/2 + e^(-a eta^2/2) / sqrt(2 pi a) * sum_k C_k(eta) a^-k,
//   P = erfc(-eta sqrt(a/2))/2 - (the same second term),
// eta = sign(x - a) sqrt(2 (sigma - log1p(sigma))), sigma = (x - a)/a (double-double); a eta^2/2
// and eta sqrt(a/2) as double-doubles; erfc(w_hi + w_lo) = erfc(w_hi) - 2/sqrt(pi) e^(-w_hi^2)
// w_lo; the sum as torch's (C_k by Horner-free power sums in double, k and n < 25, stopped on
// values: a C_k term <= 2^-56 of C_k, an a^-k term growing or <= 2^-56 of the sum).
REPMODE_HD double igam_temme(double a, double x, bool upper) {
  DD sigma = dd_div(two_sum(x, -a), DD{a, 0.0});
  DD h = {0.0, 0.0};
  DD eta = {0.0, 0.0};
  if (sigma.hi != 0.0) {
    h = half_eta_squared(sigma, x, a);
    eta = dd_sqrt(DD{2.0 * h.hi, 2.0 * h.lo});
    if (x < a) eta = dd_neg(eta);
  }
  DD w = dd_mul(eta, dd_sqrt(DD{0.5 * a, 0.0}));
  if (!upper) w = dd_neg(w);
  double er = repmode_erfc(w.hi);
  if (w.lo != 0.0) er = er - (kTwoOverSqrtPi * repmode_exp(-(w.hi * w.hi))) * w.lo;
  double res = 0.5 * er;

  const double* d = temme_coef();
  double e = eta.hi;
  double etapow[25];
  etapow[0] = 1.0;
  for (int n = 1; n < 25; ++n) etapow[n] = e * etapow[n - 1];
  double sum = 0.0, afac = 1.0, absold = inf64();
  for (int k = 0; k < 25; ++k) {
    double ck = d[25 * k];
    for (int n = 1; n < 25; ++n) {
      double term = d[25 * k + n] * etapow[n];
      ck = ck + term;
      if ((term < 0.0 ? -term : term) <= kTol * (ck < 0.0 ? -ck : ck)) break;
    }
    double term = ck * afac;
    double absterm = term < 0.0 ? -term : term;
    if (absterm > absold) break;
    sum = sum + term;
    if (absterm <= kTol * (sum < 0.0 ? -sum : sum)) break;
    absold = absterm;
    afac = afac / a;
  }
  DD ae = dd_mul_d(h, a);
  double corr = (exp_dd(DD{-ae.hi, -ae.lo}) * sum) / (repmode_sqrt(a) * kSqrt2Pi);
  return upper ? res + corr : res - corr;
}

// Q (upper) or P outside Temme's region: torch's choice among the series and the fraction.
REPMODE_HD double igamc_regions(double a, double x) {
  if (x > 1.1) {
    if (x < a) return 1.0 - igam_series(a, x);
    return igamc_fraction(a, x);
  }
  if (x <= 0.5) {
    if (-0.4 / repmode_log(x) < a) return 1.0 - igam_series(a, x);
    return igamc_series(a, x);
  }
  if (x * 1.1 < a) return 1.0 - igam_series(a, x);
  return igamc_series(a, x);
}

REPMODE_HD double igamma_def(double a, double x, bool upper) {
  if (is_nan(a) || is_nan(x) || a < 0.0 || x < 0.0) return Canonical<double>::nan();
  if (a == 0.0) {
    if (x > 0.0) return upper ? 0.0 : 1.0;
    return Canonical<double>::nan();
  }
  if (x == 0.0) return upper ? 1.0 : 0.0;
  if (a == inf64()) {
    if (x == inf64()) return Canonical<double>::nan();
    return upper ? 1.0 : 0.0;
  }
  if (x == inf64()) return upper ? 0.0 : 1.0;
  double dxa = x - a;
  if (dxa < 0.0) dxa = -dxa;
  if (a > 20.0 && dxa / a < 0.3) return igam_temme(a, x, upper);
  if (upper) return igamc_regions(a, x);
  if (x > 1.0 && x > a) return 1.0 - igamc_regions(a, x);
  return igam_series(a, x);
}

// ============================== Airy Ai ==============================
// Torch's (Cephes') regions: x < -2.09 the oscillatory expansion, |x| <= 2.09 (x < 2.09) the
// power series, x >= 2.09 the exponentially small expansion; Cephes' rational coefficients. The
// oscillatory region uses Cephes' denominators p1evl(zz, AFD, 9) and p1evl(zz, AGD, 10), whose
// leading coefficient 1 torch's port drops (torch's Ai is off by up to 6.6e-7 absolute near
// x = -2.34, the first zero; docs/math.md).

REPMODE_HD const double* airy_coef() {
  // AN[8], AD[8], AFN[9], AFD[9], AGN[11], AGD[10] (Cephes airy.c, as in torch)
  // clang-format off
  static constexpr double k[55] = {
      +3.46538101525629032477e-01, +1.20075952739645805542e+01, +7.62796053615234516538e+01,
      +1.68089224934630576269e+02, +1.59756391350164413639e+02, +7.05360906840444183113e+01,
      +1.40264691163389668864e+01, +9.99999999999999995305e-01,
      +5.67594532638770212846e-01, +1.47562562584847203173e+01, +8.45138970141474626562e+01,
      +1.77318088145400459522e+02, +1.64234692871529701831e+02, +7.14778400825575695274e+01,
      +1.40959135607834029598e+01, +1.00000000000000000470e+00,
      -1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
      -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
      -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08,
      +1.33560420706553243746e+01, +3.26825032795224613948e+01, +2.67367040941499554804e+01,
      +9.18707402907259625840e+00, +1.47529146771666414581e+00, +1.15687173795188044134e-01,
      +4.40291641615211203805e-03, +7.54720348287414296618e-05, +4.51850092970580378464e-07,
      +1.97339932091685679179e-02, +3.91103029615688277255e-01, +1.06579897599595591108e+00,
      +9.39169229816650230044e-01, +3.51465656105547619242e-01, +6.33888919628925490927e-02,
      +5.85804113048388458567e-03, +2.82851600836737019778e-04, +6.98793669997260967291e-06,
      +8.11789239554389293311e-08, +3.41551784765923618484e-10,
      +9.30892908077441974853e+00, +1.98352928718312140417e+01, +1.55646628932864612953e+01,
      +5.47686069422975497931e+00, +9.54293611618961883998e-01, +8.64580826352392193095e-02,
      +4.12656523824222607191e-03, +1.01259085116509135510e-04, +1.17166733214413521882e-06,
      +4.91834570062930015649e-09,
  };
  // clang-format on
  return k;
}

// Horner's rule over c[0..n-1], c[0] the highest power (Cephes' polevl); p1evl: the same with
// an implicit leading coefficient 1 (degree n).
REPMODE_HD double horner(const double* c, int n, double z) {
  double p = 0.0;
  for (int i = 0; i < n; ++i) p = p * z + c[i];
  return p;
}
REPMODE_HD double horner1(const double* c, int n, double z) {
  double p = 1.0;
  for (int i = 0; i < n; ++i) p = p * z + c[i];
  return p;
}

constexpr double kAi0Hi = 0x1.6b8c7962715b8p-2, kAi0Lo = 0x1.7a96d7bb04e65p-56;     // Ai(0)
constexpr double kAip0Hi = 0x1.0907f42b70f8bp-2, kAip0Lo = -0x1.d1459035afde2p-56;  // -Ai'(0)
constexpr double kTwoThirdsHi = 0x1.5555555555555p-1, kTwoThirdsLo = 0x1.5555555555555p-55;
constexpr double kPiOver4Hi = 0x1.921fb54442d18p-1, kPiOver4Lo = 0x1.1a62633145c07p-55;
constexpr double kInvSqrtPi = 0x1.20dd750429b6dp-1;  // 1/sqrt(pi)

// zeta = (2/3) |x|^(3/2) as a double-double (|x| normal).
REPMODE_HD DD airy_zeta(double ax) {
  DD s = dd_sqrt(DD{ax, 0.0});
  return dd_mul(dd_mul_d(s, ax), DD{kTwoThirdsHi, kTwoThirdsLo});
}

}  // namespace igamma_detail

// P(a, x) and Q(a, x), the float64 definitions (see the top of this file).
REPMODE_HD double special_igamma(double a, double x) { return igamma_detail::igamma_def(a, x, false); }
REPMODE_HD double special_igammac(double a, double x) { return igamma_detail::igamma_def(a, x, true); }

// Ai(x), the float64 definition. NaN and +-inf -> NaN (torch returns NaN at both infinities);
// x < -2.09: Ai = (1/sqrt(pi)) |x|^(-1/4) (sin(theta) uf - cos(theta) ug), theta = zeta + pi/4 as a
// double-double, sin/cos of it as sin(th) + cos(th) tl and cos(th) - sin(th) tl, the difference of
// products in double-double (torch rounds theta, an error ~ zeta ulp near the zeros of Ai); NaN
// where torch's own -2x sqrt(-x)/3 overflows (x < -2.08e205, as torch);
// -2.09 <= x < 2.09: c1 f(x) - c2 g(x), the Maclaurin series f = sum z^j / (2*3*5*6*...),
// g = x sum z^j / (3*4*6*7*...), z = x^3, 20 terms each (the 21st < 2^-120 of the sum), all in
// double-double (torch: double, with the cancellation of c1 f - c2 g near 2.09);
// x >= 2.09: (1/sqrt(pi)) AN(1/zeta)/AD(1/zeta) / (2 x^(1/4)) e^-zeta, e^-zeta from the
// double-double zeta; 0 above 110 (Ai < 2^-1075; torch returns 0 already above 103.892, where
// the true values are subnormal: repmode returns them).
REPMODE_HD double special_airy_ai(double x) {
  using namespace igamma_detail;
  if (is_nan(x) || x == inf64() || x == -inf64()) return Canonical<double>::nan();
  const double* c = airy_coef();
  if (x < -2.09) {
    double tn = -2.0 * x * repmode_sqrt(-x) / 3.0;
    if (tn == inf64()) return Canonical<double>::nan();
    double ax = -x;
    DD zeta = airy_zeta(ax);
    double z = 1.0 / zeta.hi;
    double zz = z * z;
    double uf = 1.0 + zz * horner(c + 16, 9, zz) / horner1(c + 25, 9, zz);
    double ug = z * horner(c + 34, 11, zz) / horner1(c + 45, 10, zz);
    DD th = dd_add(zeta, DD{kPiOver4Hi, kPiOver4Lo});
    double s0 = repmode_sin(th.hi), c0 = repmode_cos(th.hi);
    double f = s0 + c0 * th.lo;
    double g = c0 - s0 * th.lo;
    DD v = dd_add(two_prod(f, uf), dd_neg(two_prod(g, ug)));
    double k = kInvSqrtPi / repmode_sqrt(repmode_sqrt(ax));
    return k * (v.hi + v.lo);
  }
  if (x >= 2.09) {
    if (x > 110.0) return 0.0;
    DD zeta = airy_zeta(x);
    double iz = 1.0 / zeta.hi;
    double r = kInvSqrtPi * (horner(c, 8, iz) / horner(c + 8, 8, iz)) / (2.0 * repmode_sqrt(repmode_sqrt(x)));
    return r * exp_dd(DD{-zeta.hi, -zeta.lo});
  }
  DD z = dd_mul_d(two_prod(x, x), x);
  DD m = {1.0, 0.0}, n = {x, 0.0};
  DD f = m, g = n;
  for (int j = 1; j <= 20; ++j) {
    double k3 = 3.0 * double(j);
    m = dd_div(dd_mul(m, z), DD{(k3 - 1.0) * k3, 0.0});
    n = dd_div(dd_mul(n, z), DD{k3 * (k3 + 1.0), 0.0});
    f = dd_add(f, m);
    g = dd_add(g, n);
  }
  DD v = dd_add(dd_mul(f, DD{kAi0Hi, kAi0Lo}), dd_neg(dd_mul(g, DD{kAip0Hi, kAip0Lo})));
  return v.hi + v.lo;
}

}  // namespace repmode
