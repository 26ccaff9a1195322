//! Eyes and a browser: images in (attached, dropped, read, refused by a text-only model) and web
//! pages fetched (`web_fetch` against a real local server, PDFs read by a child process), and the provider's web search.

mod handoff;
mod images;
mod page_server;
mod web_fetch;
mod web_fetch_pdf;
mod web_search;
