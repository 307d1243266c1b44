//! Batched generation for the runners: one policy call per step for all live episodes.

use agent_rl_core::{ChatRequest, Completion, CoreError, Policy, SamplingConfig};

/// Generates for the whole batch; when that fails, request by request, so that one episode's
/// failure (a prompt too long for the model) ends that episode only. `who` names the runner
/// in the error of a policy that returns no completion.
pub(crate) fn generate_each(
    policy: &mut dyn Policy,
    requests: &[ChatRequest],
    sampling: &SamplingConfig,
    who: &str,
) -> Vec<std::result::Result<Completion, CoreError>> {
    if let Ok(completions) = policy.generate(requests, sampling)
        && completions.len() == requests.len()
    {
        return completions.into_iter().map(Ok).collect();
    }
    requests
        .iter()
        .map(|request| {
            let mut completions = policy.generate(std::slice::from_ref(request), sampling)?;
            completions.pop().ok_or_else(|| CoreError::Environment {
                environment: who.into(),
                reason: "the policy returned no completion".into(),
            })
        })
        .collect()
}
