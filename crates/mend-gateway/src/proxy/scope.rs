//! Stage 5b, scope: an exchange that names a conversation (and will be captured) claims
//! it for the caller's scope ([`crate::scope`]) before anything is forwarded. A
//! conversation of another scope ends the exchange here with 403 in the provider's
//! shape: nothing is forwarded and nothing written. 403 rather than 404: the id is
//! taken whatever the answer says (the caller could not create it either), and 403 is
//! what the official SDKs never retry (unlike 409 and 5xx), so a refused caller is told
//! once, plainly. A request whose scope cannot be read (no tenant header where one
//! is configured, a SigV4 header without a key id) gets 400. When the store cannot be
//! asked, the exchange is forwarded but not captured: the client's call does not depend
//! on the store, and nothing is written that was not checked.

use super::{Ctx, Early};
use crate::config::Mode;
use crate::errors::Kind;
use crate::exchange::Claim;
use crate::{scope, CONVERSATION_HEADER};

/// The conversation to capture into, now the caller's; `None` when there is none to
/// capture into or the store could not say whose it is.
pub(super) async fn claim(
    ctx: &Ctx,
    mode: Mode,
    conversation: Option<String>,
) -> Result<Option<String>, Early> {
    let (Some(conversation), Some(sink)) = (conversation, ctx.inner.conversations.as_ref()) else {
        return Ok(None);
    };
    // A route that is not judged (a model listing, Gemini's countTokens) is no exchange
    // of the conversation: nothing to claim, nothing to capture.
    if !ctx.route.judged {
        return Ok(None);
    }
    let tenant_header = ctx.inner.config.tenant_header.as_deref();
    let caller = scope::caller_scope(
        ctx.dialect(),
        tenant_header,
        &ctx.headers,
        ctx.query.as_deref(),
    );
    let caller = match caller {
        Ok(s) => s,
        Err(why) => {
            ctx.inner
                .metrics
                .request(ctx.dname(), mode.name(), "no_scope");
            return Err(ctx.local(Kind::InvalidRequest, &why.to_string()));
        }
    };
    match sink.claim(&conversation, ctx.dialect(), &caller).await {
        Ok(Claim::Granted) => {
            // Set once per request, here only.
            let _ = ctx.scope.set(caller);
            Ok(Some(conversation))
        }
        Ok(Claim::OutOfScope) => {
            ctx.inner
                .metrics
                .request(ctx.dname(), mode.name(), "out_of_scope");
            tracing::warn!(
                request_id = %ctx.id, dialect = ctx.dname(), conversation = %conversation,
                scope = %caller, "refused: the conversation belongs to another scope"
            );
            let per = match tenant_header {
                Some(h) => format!("per tenant ({h})"),
                None => "per upstream credential".to_string(),
            };
            let msg = format!(
                "mend: conversation '{conversation}' (named in {CONVERSATION_HEADER}) belongs to \
                 another caller; this gateway keeps conversations {per}, so name one of your own"
            );
            Err(ctx.local(Kind::Forbidden, &msg))
        }
        Err(why) => {
            ctx.inner.metrics.store_append("claim_error");
            tracing::warn!(
                request_id = %ctx.id, conversation = %conversation, error = %why,
                "the store could not say whose the conversation is; forwarded, not captured"
            );
            Ok(None)
        }
    }
}
