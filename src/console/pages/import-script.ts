/**
 * The Import page's progress bar, as progressive enhancement: without it the page reloads itself
 * every second (a <noscript> refresh); with it, the bar follows the job's JSON status and the page
 * reloads once, when the summary is ready. Served from /console/assets/import.js (no inline script: CSP).
 */
export const IMPORT_JS = `
(function () {
  var box = document.getElementById('import-progress');
  if (!box) return;
  var bar = document.getElementById('import-bar');
  var counts = document.getElementById('import-counts');
  var url = box.getAttribute('data-status');
  function poll() {
    fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' } }).then(function (response) {
      if (!response.ok) throw new Error(String(response.status));
      return response.json();
    }).then(function (status) {
      bar.max = Math.max(1, status.steps);
      bar.value = status.done;
      bar.textContent = status.done + ' of ' + status.steps;
      counts.textContent = status.done.toLocaleString('en') + ' of ' + status.steps.toLocaleString('en') + ': ' + status.counts;
      if (status.finished) window.location.reload();
      else setTimeout(poll, 400);
    }).catch(function () { setTimeout(function () { window.location.reload(); }, 2000); });
  }
  setTimeout(poll, 200);
})();
`;
