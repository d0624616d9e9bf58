// The popup: a search box and a form. It holds no engine of its own; every
// request goes to the service worker (background.js), which keeps the
// memory.

const $ = (id) => document.getElementById(id);

/** Sends one request to the service worker; rejects with its error. */
async function ask(op, args = {}) {
  const answer = await chrome.runtime.sendMessage({ op, ...args });
  if (!answer) throw new Error('the service worker did not answer');
  if (!answer.ok) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
  return answer.value;
}

function say(text, error = false) {
  const box = $('message');
  box.textContent = text;
  box.classList.toggle('error', error);
  box.hidden = false;
}

async function showStatus() {
  const s = await ask('status');
  document.body.dataset.started = s.startedAt;
  $('status').textContent = `${s.entries} ${s.entries === 1 ? 'note' : 'notes'} in IndexedDB "${s.database}" · engine started ${new Date(s.startedAt).toLocaleTimeString()}`;
}

/** Only the answer to the latest keystroke is shown. */
let searchSeq = 0;

async function search() {
  const seq = ++searchSeq;
  const query = $('search').value.trim();
  const results = query ? await ask('search', { query }) : [];
  if (seq !== searchSeq) return;
  $('results').replaceChildren(
    ...results.map((r) => {
      const li = document.createElement('li');
      const title = document.createElement('div');
      title.className = 'title';
      title.textContent = r.title;
      const path = document.createElement('div');
      path.className = 'path';
      path.textContent = r.path;
      const excerpt = document.createElement('div');
      excerpt.textContent = r.excerpt;
      li.append(title, path, excerpt);
      return li;
    }),
  );
  document.body.dataset.searched = query;
}

$('search').addEventListener('input', () => search().catch((err) => say(`Search failed: ${err.message}`, true)));

$('add').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  $('message').hidden = true;
  try {
    const { path } = await ask('add', { folder: $('folder').value, title: $('title').value, text: $('text').value });
    say(`Saved as ${path}.`);
    $('title').value = '';
    $('text').value = '';
    await Promise.all([showStatus(), $('search').value ? search() : null]);
  } catch (err) {
    say(`Not saved: ${err.message}`, true);
  }
});

showStatus().then(
  () => (document.body.dataset.ready = 'true'),
  (err) => say(`The engine could not start: ${err.message}`, true),
);
