/**
 * The tracker sites embed:
 *
 *   <script src="https://geo.example.com/api/v2/geo/tracker.js" data-site-token="geosite_…" defer></script>
 *   <script>keelGeo.consent(true) // or false, from the site's consent banner</script>
 *
 * It sends nothing until `keelGeo.consent(…)` is called: calls made before are queued (at most 50). With
 * consent(false) only anonymous events go out (the service keeps nothing identifying); with consent(true) user
 * ids and properties are sent too. Events are batched and posted with fetch keepalive.
 */
export const TRACKER_SCRIPT = `(function () {
  'use strict';
  var script = document.currentScript;
  if (!script) return;
  var token = script.getAttribute('data-site-token');
  var endpoint = script.getAttribute('data-endpoint') || new URL('/api/v2/geo/events', script.src).href;
  var consent = null;
  var queue = [];
  var pending = [];
  var timer = null;
  var userId = null;

  function flush() {
    timer = null;
    if (consent === null || pending.length === 0) return;
    var events = pending.splice(0, 100);
    try {
      fetch(endpoint, {
        method: 'POST',
        keepalive: true,
        credentials: 'omit',
        headers: { 'content-type': 'application/json', 'x-site-token': token },
        body: JSON.stringify({ consent: { analytics: consent }, events: events })
      }).catch(function () {});
    } catch (e) {}
    if (pending.length > 0) schedule();
  }
  function schedule() { if (timer === null) timer = setTimeout(flush, 1000); }
  function enqueue(event) {
    event.occurredAt = new Date().toISOString();
    if (consent === null) { if (queue.length < 50) queue.push(event); return; }
    if (!consent) { delete event.properties; delete event.userId; }
    else if (userId) event.userId = userId;
    pending.push(event);
    schedule();
  }
  var api = {
    consent: function (granted) {
      consent = granted === true;
      var waiting = queue; queue = [];
      for (var i = 0; i < waiting.length; i++) enqueue(waiting[i]);
    },
    identify: function (id) { userId = typeof id === 'string' ? id : null; },
    pageview: function () { enqueue({ type: 'pageview', url: location.href, referrer: document.referrer || undefined }); },
    track: function (name, properties) { enqueue({ type: 'event', name: String(name), url: location.href, properties: properties }); }
  };
  window.keelGeo = api;
  document.addEventListener('visibilitychange', function () { if (document.visibilityState === 'hidden') flush(); });
  api.pageview();
})();
`;
