//! Batched generation for the runners: one policy call per step for all live episodes.

use agent_rl_core::{ChatRequest, Completion, CoreError, Policy, SamplingConfig};

use crate::failure::OverlongPrompt;

/// Generates for the whole batch; when that fails, request by request, so that one episode's
/// failure ends that episode only. A prompt that does not fit the model's context with
/// `sampling.max_new_tokens` fails without being generated, or (with
/// [`OverlongPrompt::Truncate`]) is generated alone with the budget the context leaves. `who`
/// names the runner in the error of a policy that returns no completion.
pub(crate) fn generate_each(
    policy: &mut dyn Policy,
    requests: &[ChatRequest],
    sampling: &SamplingConfig,
    overlong: OverlongPrompt,
    who: &str,
) -> Vec<std::result::Result<Completion, CoreError>> {
    let budgets: Vec<Result<usize, CoreError>> = requests
        .iter()
        .map(|request| budget(policy, request, sampling.max_new_tokens, overlong))
        .collect();
    let full: Vec<usize> = (0..requests.len())
        .filter(|&i| matches!(budgets[i], Ok(tokens) if tokens == sampling.max_new_tokens))
        .collect();
    let mut out: Vec<Option<Result<Completion, CoreError>>> =
        (0..requests.len()).map(|_| None).collect();
    let batch: Vec<ChatRequest> = full.iter().map(|&i| requests[i].clone()).collect();
    if !batch.is_empty()
        && let Ok(completions) = policy.generate(&batch, sampling)
        && completions.len() == batch.len()
    {
        for (&i, completion) in full.iter().zip(completions) {
            out[i] = Some(Ok(completion));
        }
    }
    for (i, budget) in budgets.into_iter().enumerate() {
        if out[i].is_some() {
            continue;
        }
        out[i] = Some(budget.and_then(|max_new_tokens| {
            let sampling = SamplingConfig {
                max_new_tokens,
                ..sampling.clone()
            };
            let mut completions = policy.generate(std::slice::from_ref(&requests[i]), &sampling)?;
            completions.pop().ok_or_else(|| CoreError::Environment {
                environment: who.into(),
                reason: "the policy returned no completion".into(),
            })
        }));
    }
    out.into_iter().flatten().collect()
}

/// The tokens `request` may generate: `max_new_tokens`, or under `Truncate` what the context
/// leaves; an error naming the lengths when the prompt does not fit.
fn budget(
    policy: &dyn Policy,
    request: &ChatRequest,
    max_new_tokens: usize,
    overlong: OverlongPrompt,
) -> Result<usize, CoreError> {
    let Some(fit) = policy.context_fit(request)? else {
        return Ok(max_new_tokens);
    };
    if fit.prompt_tokens + max_new_tokens <= fit.context_tokens {
        return Ok(max_new_tokens);
    }
    if overlong == OverlongPrompt::Truncate && fit.room() > 0 {
        return Ok(fit.room());
    }
    let advice = match overlong {
        OverlongPrompt::Skip => "; skipped (overlong = truncate generates the tokens that fit)",
        OverlongPrompt::Truncate => "; skipped: no room is left for an answer",
    };
    Err(CoreError::InvalidArgument {
        field: "prompt".into(),
        reason: format!(
            "{} prompt tokens + max_new_tokens {max_new_tokens} exceed the model's context of \
             {} tokens{advice}",
            fit.prompt_tokens, fit.context_tokens
        ),
    })
}
