// Binomic dashboard: the only script. Served from the dashboard itself (the page's CSP allows no
// other), it asks before a change and refreshes live tables and charts in place.
"use strict";
document.addEventListener("submit", (event) => {
  const message = event.target.getAttribute("data-confirm");
  if (message && !window.confirm(message)) {
    event.preventDefault();
  }
});
// One request per refresh, whatever the number of live parts of the page.
const live = [...document.querySelectorAll("[data-live]")];
if (live.length > 0) {
  const period = Math.min(...live.map((element) => Number(element.getAttribute("data-live"))));
  setInterval(async () => {
    try {
      const response = await fetch(window.location.pathname + window.location.search, { credentials: "same-origin" });
      if (!response.ok) return;
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      for (const element of live) {
        const fresh = page.getElementById(element.id);
        if (fresh) element.replaceChildren(...fresh.childNodes);
      }
      // While the broker does not answer, the numbers above are the last it gave: say so.
      const slow = page.getElementById("broker-slow");
      let warning = document.getElementById("live-warning");
      if (slow && !warning) {
        warning = document.createElement("p");
        warning.id = "live-warning";
        warning.className = "error";
        document.querySelector("main").prepend(warning);
      }
      if (slow) warning.textContent = slow.textContent + " The numbers below are from before.";
      else if (warning) warning.remove();
      const footer = page.querySelector("footer");
      if (footer) document.querySelector("footer").textContent = footer.textContent;
    } catch (e) {
      // the next tick tries again
    }
  }, period);
}
