//! The executor in a real browser (`wasm-pack test`, run by scripts/wasm-test.sh): promises
//! into futures and back, the order tasks run in, and a task that keeps waking itself.

use super::*;
use core::task::Poll;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Pending once (waking itself at once), ready the next time.
fn yield_now() -> impl Future<Output = ()> {
    let mut yielded = false;
    core::future::poll_fn(move |cx| {
        if yielded {
            return Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    })
}

#[wasm_bindgen_test]
async fn a_promise_becomes_its_value_or_its_rejection() {
    let ok = JsFuture::from(Promise::resolve(&JsValue::from(1))).await;
    assert_eq!(ok, Ok(JsValue::from(1)));
    let err = JsFuture::from(Promise::reject(&JsValue::from("no"))).await;
    assert_eq!(err, Err(JsValue::from("no")));
}

#[wasm_bindgen_test]
async fn a_future_becomes_a_promise_that_settles_with_its_result() {
    let p = future_to_promise(async {
        yield_now().await;
        Ok(JsValue::from(2))
    });
    assert_eq!(JsFuture::from(p).await, Ok(JsValue::from(2)));
    let p = future_to_promise(async { Err(JsValue::from("why")) });
    assert_eq!(JsFuture::from(p).await, Err(JsValue::from("why")));
}

#[wasm_bindgen_test]
async fn spawned_tasks_start_later_in_the_order_they_were_spawned() {
    let seen = Rc::new(Slot::new(Vec::new()));
    for n in 1..=3 {
        let seen = seen.clone();
        spawn_local(async move { seen.borrow_mut().push(n) });
    }
    assert!(
        seen.borrow().is_empty(),
        "a spawned task is not polled at once"
    );
    JsFuture::from(Promise::resolve(&JsValue::NULL))
        .await
        .unwrap();
    yield_now().await;
    assert_eq!(*seen.borrow(), [1, 2, 3]);
}

#[wasm_bindgen_test]
async fn a_task_that_keeps_waking_itself_lets_the_page_run() {
    let seen = Rc::new(Slot::new(Vec::new()));
    let busy = seen.clone();
    spawn_local(async move {
        for _ in 0..5 {
            yield_now().await;
        }
        busy.borrow_mut().push("busy done");
    });
    // Settled by the browser's own microtask: it comes between two polls of the busy task
    // only if each drain polls just the tasks queued before it began.
    let other = seen.clone();
    spawn_local(async move {
        JsFuture::from(Promise::resolve(&JsValue::NULL))
            .await
            .unwrap();
        other.borrow_mut().push("promise");
    });
    let p = future_to_promise(async {
        for _ in 0..10 {
            yield_now().await;
        }
        Ok(JsValue::NULL)
    });
    JsFuture::from(p).await.unwrap();
    assert_eq!(*seen.borrow(), ["promise", "busy done"]);
}

#[wasm_bindgen_test]
async fn a_future_dropped_before_its_promise_settles_is_no_harm() {
    let d = deferred();
    let promise: Promise = d.get(0).unchecked_into();
    drop(JsFuture::from(promise.clone()));
    settle(&d, true, &JsValue::from(3));
    // The promise's callback runs with nobody waiting for it; the next one still works.
    assert_eq!(JsFuture::from(promise).await, Ok(JsValue::from(3)));
}
