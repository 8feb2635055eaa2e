//! The module's executor, in place of wasm-bindgen-futures: [`spawn_local`], a `Promise`
//! as a future ([`JsFuture`]) and a future as a `Promise` ([`future_to_promise`]), with
//! the same scheduling (a spawned or woken task is polled in a later microtask, and one
//! drain polls only the tasks queued before it began).
//!
//! Why not wasm-bindgen-futures: its queue and its promise callbacks keep their state in
//! `RefCell`s, and a `RefCell` borrow conflict links `core::fmt`'s panic formatting, which
//! nothing here ever shows (a panic traps); with JSPI support and two closures per promise
//! that was about 1.5 KiB of the gzipped module. Here the state is in [`Slot`]s, a promise
//! reports to one page-wide callback, and a settled future is woken through it.
//!
//! Two small combinators, [`Then`] and [`Maybe`], let the glue's futures be plain
//! functions returning a future instead of `async fn`s around one: each `async fn` nested
//! in another adds a state machine of its own to the wasm.

use crate::prelude::*;
use alloc::rc::Rc;
use core::cell::Cell;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

use js_sys::{Array, Promise};
use wasm_bindgen::prelude::*;

use super::cell::Slot;
use super::page::PageCell;

#[wasm_bindgen(module = "/src/browser/glue.js")]
extern "C" {
    /// Runs `f` in a microtask.
    fn microtask(f: &JsValue);
    /// Calls `settled(id, ok, value)` once `p` settles.
    fn watch(p: &Promise, id: u32, settled: &JsValue);
    /// A new promise and what settles it: `[promise, resolve, reject]`.
    fn deferred() -> Array;
    /// Resolves (`ok`) or rejects a [`deferred`] promise with `value`.
    fn settle(d: &Array, ok: bool, value: &JsValue);
}

/// A spawned future and whether it waits in the queue.
struct Task {
    future: Slot<Option<Pin<Box<dyn Future<Output = ()>>>>>,
    queued: Cell<bool>,
}

/// The page's executor state.
struct Executor {
    /// Tasks to poll, in the order they were woken.
    queue: Vec<Rc<Task>>,
    /// A drain is scheduled.
    scheduled: bool,
    /// The drain as a JS function, made on first use and kept for the page.
    drain: Option<JsValue>,
    /// [`settled`] as a JS function, likewise.
    settled: Option<JsValue>,
}

static EXECUTOR: PageCell<Executor> = PageCell::new(Executor {
    queue: Vec::new(),
    scheduled: false,
    drain: None,
    settled: None,
});

/// Runs `future` to completion in the background, first polled in a later microtask.
pub(crate) fn spawn_local(future: impl Future<Output = ()> + 'static) {
    let task = Rc::new(Task {
        future: Slot::new(Some(Box::pin(future))),
        queued: Cell::new(false),
    });
    schedule(task);
}

/// Queues `task` unless it is queued already, and schedules a drain if none is.
fn schedule(task: Rc<Task>) {
    if task.queued.replace(true) {
        return;
    }
    let drain = EXECUTOR.with(|e| {
        let mut e = e.borrow_mut();
        e.queue.push(task);
        if core::mem::replace(&mut e.scheduled, true) {
            return None;
        }
        let f = e
            .drain
            .get_or_insert_with(|| Closure::<dyn FnMut()>::new(drain).into_js_value());
        Some(f.clone())
    });
    if let Some(f) = drain {
        microtask(&f);
    }
}

/// Polls the tasks queued before it began; the ones woken meanwhile wait for the next
/// drain, so a task that keeps waking itself cannot starve the page.
fn drain() {
    let batch = EXECUTOR.with(|e| {
        let mut e = e.borrow_mut();
        e.scheduled = false;
        core::mem::take(&mut e.queue)
    });
    for task in batch {
        task.queued.set(false);
        let waker = waker(task.clone());
        let mut cx = Context::from_waker(&waker);
        let mut future = task.future.borrow_mut();
        if let Some(f) = future.as_mut() {
            if f.as_mut().poll(&mut cx).is_ready() {
                *future = None;
            }
        }
    }
}

// A waker is an `Rc<Task>` turned into a raw pointer. Wakers must be `Send` and `Sync`;
// this module runs on one thread (page.rs refuses a build with atomics), so no other
// thread ever holds one.
static VTABLE: RawWakerVTable = RawWakerVTable::new(clone_raw, wake_raw, wake_by_ref_raw, drop_raw);

fn waker(task: Rc<Task>) -> Waker {
    // SAFETY: the pointer is an `Rc<Task>` given up to the waker, which the functions of
    // VTABLE take back exactly once (wake, drop) or share (clone, wake_by_ref).
    unsafe { Waker::from_raw(RawWaker::new(Rc::into_raw(task).cast(), &VTABLE)) }
}

unsafe fn clone_raw(p: *const ()) -> RawWaker {
    // SAFETY: `p` came from `Rc::into_raw` in `waker` and the waker still owns it.
    unsafe { Rc::increment_strong_count(p.cast::<Task>()) };
    RawWaker::new(p, &VTABLE)
}

unsafe fn wake_raw(p: *const ()) {
    // SAFETY: as in `clone_raw`; the waker is consumed, so its count is taken back.
    schedule(unsafe { Rc::from_raw(p.cast::<Task>()) });
}

unsafe fn wake_by_ref_raw(p: *const ()) {
    // SAFETY: as in `clone_raw`; the waker keeps its count, so one is added for the queue.
    unsafe { Rc::increment_strong_count(p.cast::<Task>()) };
    schedule(unsafe { Rc::from_raw(p.cast::<Task>()) });
}

unsafe fn drop_raw(p: *const ()) {
    // SAFETY: as in `wake_raw`.
    drop(unsafe { Rc::from_raw(p.cast::<Task>()) });
}

/// What a promise settled with, and the task waiting for it.
#[derive(Default)]
struct Settled {
    value: Option<Result<JsValue, JsValue>>,
    waker: Option<Waker>,
}

/// A `Promise` as a future: its value, or what it rejected with.
pub(crate) struct JsFuture {
    state: Rc<Slot<Settled>>,
}

impl From<Promise> for JsFuture {
    fn from(p: Promise) -> JsFuture {
        let state = Rc::new(Slot::new(Settled::default()));
        // `watch` reports once, to `settled`, which takes this count back.
        let id = Rc::into_raw(state.clone()) as usize as u32;
        let f = EXECUTOR.with(|e| {
            let mut e = e.borrow_mut();
            let f = e.settled.get_or_insert_with(|| {
                Closure::<dyn FnMut(u32, bool, JsValue)>::new(settled).into_js_value()
            });
            f.clone()
        });
        watch(&p, id, &f);
        JsFuture { state }
    }
}

/// A watched promise settled: stores the outcome and wakes the task waiting for it.
fn settled(id: u32, ok: bool, value: JsValue) {
    // SAFETY: `id` is the `Rc::into_raw` that `JsFuture::from` handed to `watch`, which
    // reports each promise once.
    let state = unsafe { Rc::from_raw(id as usize as *const Slot<Settled>) };
    let waker = {
        let mut s = state.borrow_mut();
        s.value = Some(if ok { Ok(value) } else { Err(value) });
        s.waker.take()
    };
    if let Some(w) = waker {
        w.wake();
    }
}

impl Future for JsFuture {
    type Output = Result<JsValue, JsValue>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut s = self.state.borrow_mut();
        match s.value.take() {
            Some(v) => Poll::Ready(v),
            None => {
                s.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// A promise settled by `future`'s result, which runs as a spawned task.
pub(crate) fn future_to_promise(
    future: impl Future<Output = Result<JsValue, JsValue>> + 'static,
) -> Promise {
    let d = deferred();
    let promise = d.get(0).unchecked_into();
    spawn_local(Settle { future, d });
    promise
}

/// `future`, whose result settles the [`deferred`] promise `d`. Written out rather than
/// an `async` block, which would keep a second copy of `future` (the one it awaits).
struct Settle<F> {
    future: F,
    d: Array,
}

impl<F: Future<Output = Result<JsValue, JsValue>>> Future for Settle<F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: `future` is pinned whenever `self` is: it is never moved out of `self`,
        // and `Settle` has no `Drop` of its own (and is `Unpin` only when `F` is). `d` is
        // never pinned: it is only read. (The submit's future is not `Unpin`, so a safe
        // projection would need a crate for it.)
        let this = unsafe { self.get_unchecked_mut() };
        let future = unsafe { Pin::new_unchecked(&mut this.future) };
        let Poll::Ready(r) = future.poll(cx) else {
            return Poll::Pending;
        };
        let (ok, v) = match r {
            Ok(v) => (true, v),
            Err(e) => (false, e),
        };
        settle(&this.d, ok, &v);
        Poll::Ready(())
    }
}

/// `future`'s output passed through `then`: what an `async` block awaiting `future` and
/// calling `then` does, without the block's own state and copy of `future`.
pub(crate) struct Then<F, G> {
    future: F,
    then: Option<G>,
}

impl<F, G> Then<F, G> {
    /// `future`, its output passed through `then`.
    pub(crate) fn new(future: F, then: G) -> Self {
        Then {
            future,
            then: Some(then),
        }
    }
}

impl<T, F: Future + Unpin, G: FnOnce(F::Output) -> T + Unpin> Future for Then<F, G> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let this = self.get_mut();
        let Poll::Ready(v) = Pin::new(&mut this.future).poll(cx) else {
            return Poll::Pending;
        };
        match this.then.take() {
            Some(then) => Poll::Ready(then(v)),
            // Polled again after it was ready: a bug of the caller's.
            None => core::arch::wasm32::unreachable(),
        }
    }
}

/// A future that may not be there: its output, or `None` at once.
pub(crate) struct Maybe<F>(pub(crate) Option<F>);

impl<F: Future + Unpin> Future for Maybe<F> {
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.0 {
            Some(f) => Pin::new(f).poll(cx).map(Some),
            None => Poll::Ready(None),
        }
    }
}

#[cfg(test)]
#[path = "task_tests.rs"]
mod tests;
