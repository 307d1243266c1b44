//! The reward curve of a run directory (`reward_curve.svg`): per-step mean reward and its 5-step
//! moving average, as a dependency-free SVG line chart.

/// A line chart of the per-step mean reward (grey) and its 5-step moving average (blue).
/// Non-finite rewards are left out of the lines.
///
/// ```
/// let svg = agent_rl_algos::pipeline::reward_svg(&[0.1, 0.5, 0.9]);
/// assert!(svg.starts_with("<svg") && svg.contains("step 3"));
/// ```
pub fn reward_svg(rewards: &[f32]) -> String {
    let (width, height, pad) = (640.0f32, 320.0f32, 40.0f32);
    let finite: Vec<f32> = rewards.iter().copied().filter(|r| r.is_finite()).collect();
    let low = finite
        .iter()
        .copied()
        .fold(f32::INFINITY, f32::min)
        .min(0.0);
    let high = finite
        .iter()
        .copied()
        .fold(f32::NEG_INFINITY, f32::max)
        .max(low + 1e-3);
    let x = |i: usize| pad + (width - 2.0 * pad) * i as f32 / (rewards.len().max(2) - 1) as f32;
    let y = |r: f32| height - pad - (height - 2.0 * pad) * (r - low) / (high - low);
    let line = |values: &[f32]| -> String {
        values
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_finite())
            .map(|(i, &r)| format!("{:.1},{:.1}", x(i), y(r)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let smooth: Vec<f32> = (0..rewards.len())
        .map(|i| {
            let window = &rewards[i.saturating_sub(4)..=i];
            window.iter().sum::<f32>() / window.len() as f32
        })
        .collect();
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{pad}\" y=\"20\">GRPO mean reward per step (grey) and 5-step average (blue)</text>\n\
         <line x1=\"{pad}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"black\"/>\n\
         <line x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{b}\" stroke=\"black\"/>\n\
         <text x=\"4\" y=\"{b}\">{low:.2}</text><text x=\"4\" y=\"{pad}\">{high:.2}</text>\n\
         <text x=\"{r}\" y=\"{tb}\" text-anchor=\"end\">step {n}</text>\n\
         <polyline fill=\"none\" stroke=\"#999\" points=\"{raw}\"/>\n\
         <polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"{avg}\"/>\n</svg>\n",
        b = height - pad,
        r = width - pad,
        tb = height - pad + 16.0,
        n = rewards.len(),
        raw = line(rewards),
        avg = line(&smooth),
    )
}
