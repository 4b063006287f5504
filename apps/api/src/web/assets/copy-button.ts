// The only script on the site: it reveals the copy buttons (hidden without JavaScript, where the reference
// stays selectable in its <code>) and copies a button's data-copy text. Kept as a string so there is no
// bundler; served from /assets/ so the Content-Security-Policy can forbid every inline script.

/** Source of /assets/copy.js. */
export const COPY_BUTTON_SCRIPT = `'use strict';
(function () {
  function fallbackCopy(text) {
    var area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error('copy refused'));
  }
  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return fallbackCopy(text); });
    }
    return fallbackCopy(text);
  }
  function announce(button, label) {
    var original = button.getAttribute('data-label') || button.textContent;
    button.setAttribute('data-label', original);
    button.textContent = label;
    window.setTimeout(function () { button.textContent = original; }, 1500);
  }
  document.querySelectorAll('button[data-copy]').forEach(function (button) { button.hidden = false; });
  document.addEventListener('click', function (event) {
    var target = event.target;
    var button = target && target.closest ? target.closest('button[data-copy]') : null;
    if (!button) return;
    copy(button.getAttribute('data-copy') || '').then(
      function () { announce(button, 'Copied'); },
      function () { announce(button, 'Select and copy'); }
    );
  });
})();
`;
