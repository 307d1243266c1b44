//! The accept loop: HTTP/1 connections served by hyper with a header read timeout (a client
//! that does not finish its headers in time, or leaves a keep-alive connection idle that long,
//! is disconnected), and a graceful shutdown.

use std::time::Duration;

use axum::Router;
use axum::serve::Listener;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};

/// Serves `router` on `listener` until `stop` fires, then lets open connections finish.
pub(crate) async fn serve(
    mut listener: TcpListener,
    router: Router,
    header_read_timeout: Duration,
    stop: oneshot::Receiver<()>,
) {
    // Connections watch `stopping` for the shutdown and hold `open` while they run.
    let (stopping, stop_seen) = watch::channel(());
    tokio::spawn(async move {
        let _ = stop.await;
        drop(stop_seen);
    });
    let (open, open_seen) = watch::channel(());
    loop {
        let (stream, _peer) = tokio::select! {
            accepted = Listener::accept(&mut listener) => accepted,
            () = stopping.closed() => break,
        };
        let service = TowerToHyperService::new(router.clone());
        let stopping = stopping.clone();
        let open_seen = open_seen.clone();
        tokio::spawn(async move {
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_read_timeout);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            let mut asked_to_stop = false;
            loop {
                tokio::select! {
                    result = connection.as_mut() => {
                        if let Err(err) = result {
                            tracing::debug!(%err, "connection ended");
                        }
                        break;
                    }
                    () = stopping.closed(), if !asked_to_stop => {
                        asked_to_stop = true;
                        connection.as_mut().graceful_shutdown();
                    }
                }
            }
            drop(open_seen);
        });
    }
    drop(open_seen);
    drop(listener);
    open.closed().await;
}
