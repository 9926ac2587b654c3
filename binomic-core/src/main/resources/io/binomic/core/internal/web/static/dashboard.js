// Binomic dashboard: the only script. Served from the dashboard itself (the page's CSP allows no
// other), it asks before a change and refreshes live tables in place.
"use strict";
document.addEventListener("submit", (event) => {
  const message = event.target.getAttribute("data-confirm");
  if (message && !window.confirm(message)) {
    event.preventDefault();
  }
});
for (const table of document.querySelectorAll("table[data-live]")) {
  const period = Number(table.getAttribute("data-live"));
  setInterval(async () => {
    try {
      const response = await fetch(window.location.pathname, { credentials: "same-origin" });
      if (!response.ok) return;
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById(table.id);
      if (fresh) table.replaceChildren(...fresh.childNodes);
    } catch (e) {
      // the next tick tries again
    }
  }, period);
}
