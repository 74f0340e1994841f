// What the tests share: where the recorded traffic and the examples are, and skipping a
// test that needs what is absent (outside CI only: under CI=true it fails).
'use strict'
const fs = require('node:fs')
const path = require('node:path')

const repo = path.join(__dirname, '..', '..', '..')
const shared = process.env.MEND_SHARED || path.join(repo, '..', 'shared')

/** The folder of recorded provider traffic, or null (after saying why) when the test must skip. */
function fixturesDir(t) {
  const dir = path.join(shared, 'fixtures')
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) return dir
  if (process.env.CI === 'true') {
    throw new Error(`the fixtures folder ${dir} is missing or empty, and this is CI: put the shared folder beside the repository or set MEND_SHARED`)
  }
  t.skip(`no fixtures at ${dir} (set MEND_SHARED)`)
  return null
}

/** Every file named `name` below `dir`, sorted. */
function filesNamed(dir, name) {
  const out = []
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name === name) out.push(p)
    }
  }
  walk(dir)
  return out.sort()
}

const example = (name) => fs.readFileSync(path.join(repo, 'examples', name), 'utf8')

module.exports = { repo, fixturesDir, filesNamed, example }
