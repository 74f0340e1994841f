//! Conversations belong to a scope: `claim` creates, adopts or refuses atomically; an
//! append in another scope writes nothing; `list` filters by scope; forks keep theirs.

use mend_store::{
    AppendOptions, Claim, Error, Format, ListOptions, NewConversation, NewMessage, Span, Store,
    UNSCOPED,
};
use serde_json::json;

use crate::support::Backend;

fn user(text: &str) -> NewMessage {
    NewMessage::from_value(&json!({"role": "user", "content": text})).unwrap()
}

pub async fn claim_creates_adopts_and_refuses<B: Backend>(b: &B) {
    let store = b.open().await;
    let wire = Format::Wire(mend::Dialect::OpenAiChat);
    let (info, how) = store.claim("c1", "cred:aaaa", wire).await.unwrap();
    assert_eq!(
        (how, info.scope.as_str(), info.format),
        (Claim::Created, "cred:aaaa", wire)
    );
    let (again, how) = store.claim("c1", "cred:aaaa", Format::Any).await.unwrap();
    assert_eq!(how, Claim::Owned);
    assert_eq!(again.format, wire, "a claim never changes the format");
    match store.claim("c1", "cred:bbbb", wire).await {
        Err(Error::OutOfScope {
            conversation,
            scope,
        }) => {
            assert_eq!((conversation.as_str(), scope.as_str()), ("c1", "cred:bbbb"));
        }
        other => panic!("{}: another scope's claim: {other:?}", b.name()),
    }
    assert_eq!(store.info("c1").await.unwrap().scope, "cred:aaaa");
    // Made without a scope: unscoped, until the first claim takes it.
    let made = store.create(NewConversation::with_id("c2")).await.unwrap();
    assert_eq!(made.scope, UNSCOPED);
    let (_, how) = store.claim("c2", "tenant:acme", wire).await.unwrap();
    assert_eq!(how, Claim::Adopted);
    assert!(matches!(
        store.claim("c2", "tenant:other", wire).await,
        Err(Error::OutOfScope { .. })
    ));
    let scoped = NewConversation::with_id("c3").scope("anonymous");
    assert_eq!(store.create(scoped).await.unwrap().scope, "anonymous");
    for bad in ["", "a\nb"] {
        assert!(matches!(
            store.claim("c4", bad, wire).await,
            Err(Error::InvalidScope(_))
        ));
        assert!(matches!(
            store
                .create(NewConversation::with_id("c4").scope(bad))
                .await,
            Err(Error::InvalidScope(_))
        ));
    }
    assert!(matches!(store.info("c4").await, Err(Error::NotFound(_))));
}

pub async fn an_append_in_another_scope_writes_nothing<B: Backend>(b: &B) {
    let store = b.open().await;
    store.claim("mine", "cred:aaaa", Format::Any).await.unwrap();
    let first = [user("one")];
    let keyed = AppendOptions::keyed("k1").in_scope("cred:aaaa");
    store.append("mine", &first, &keyed).await.unwrap();
    // Another scope: refused, also when it replays a key the owner used.
    for options in [
        AppendOptions::default().in_scope("cred:bbbb"),
        AppendOptions::keyed("k1").in_scope("cred:bbbb"),
        AppendOptions::default().in_scope(UNSCOPED),
    ] {
        assert!(
            matches!(
                store.append("mine", &[user("poison")], &options).await,
                Err(Error::OutOfScope { .. })
            ),
            "{}: {options:?}",
            b.name()
        );
    }
    let stored = store.load("mine", Span::ALL).await.unwrap();
    assert_eq!(stored.len(), 1, "{}: nothing written", b.name());
    // The owner, and an append that names no scope (the CLI, an operator), go on.
    store
        .append(
            "mine",
            &[user("two")],
            &AppendOptions::default().in_scope("cred:aaaa"),
        )
        .await
        .unwrap();
    store
        .append("mine", &[user("three")], &AppendOptions::default())
        .await
        .unwrap();
    assert_eq!(store.info("mine").await.unwrap().last_sequence, 3);
}

pub async fn racing_claims_of_one_id_have_one_winner<B: Backend>(b: &B) {
    const CALLERS: usize = 12;
    let shared = b.open().await;
    // Twice: an id nobody has made yet (racing creates), then an unscoped one (racing
    // adoptions).
    shared
        .create(NewConversation::with_id("old"))
        .await
        .unwrap();
    for id in ["new", "old"] {
        let mut tasks = Vec::new();
        for c in 0..CALLERS {
            let store = if c % 2 == 0 {
                b.open().await
            } else {
                shared.clone()
            };
            tasks.push(tokio::spawn(async move {
                let scope = format!("cred:{c:04}");
                (scope.clone(), store.claim(id, &scope, Format::Any).await)
            }));
        }
        let mut winners = Vec::new();
        for t in tasks {
            let (scope, result) = t.await.unwrap();
            match result {
                Ok((info, how)) => {
                    assert_eq!(info.scope, scope);
                    assert_ne!(how, Claim::Owned);
                    winners.push(scope);
                }
                Err(Error::OutOfScope { .. }) => {}
                Err(e) => panic!("{}: claim of {id}: {e}", b.name()),
            }
        }
        assert_eq!(winners.len(), 1, "{}: {id}: winners {winners:?}", b.name());
        assert_eq!(shared.info(id).await.unwrap().scope, winners[0]);
    }
}

pub async fn list_filters_by_scope_and_forks_keep_theirs<B: Backend>(b: &B) {
    let store = b.open().await;
    for (id, scope) in [
        ("a1", "cred:aaaa"),
        ("b1", "cred:bbbb"),
        ("a2", "cred:aaaa"),
    ] {
        store.claim(id, scope, Format::Any).await.unwrap();
    }
    store.create(NewConversation::with_id("u1")).await.unwrap();
    let ids = |list: Vec<mend_store::ConversationInfo>| {
        list.into_iter().map(|c| c.id).collect::<Vec<_>>()
    };
    let of = |scope: &str| ListOptions {
        scope: Some(scope.to_string()),
        ..ListOptions::default()
    };
    assert_eq!(
        ids(store.list(&of("cred:aaaa")).await.unwrap()),
        ["a1", "a2"]
    );
    assert_eq!(ids(store.list(&of(UNSCOPED)).await.unwrap()), ["u1"]);
    assert!(store.list(&of("cred:cccc")).await.unwrap().is_empty());
    let paged = ListOptions {
        limit: Some(1),
        after: Some("a1".into()),
        scope: Some("cred:aaaa".into()),
    };
    assert_eq!(ids(store.list(&paged).await.unwrap()), ["a2"]);
    assert_eq!(store.list(&ListOptions::default()).await.unwrap().len(), 4);
    let fork = store.fork("b1", 0, Some("b1-fork")).await.unwrap();
    assert_eq!(fork.scope, "cred:bbbb");
    assert_eq!(store.info("b1-fork").await.unwrap().scope, "cred:bbbb");
}
