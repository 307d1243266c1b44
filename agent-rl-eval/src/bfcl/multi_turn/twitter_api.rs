//! `TwitterAPI`: bfcl-eval's posting class (`posting_api.py`): tweets keyed by integer id,
//! comments, retweets and the following list of one account.
//!
//! `post_tweet`'s default `mentions=[]` is one list object, shared by every tweet posted
//! without mentions, and `mention` on such a tweet extends it for all of them (and for later
//! posts). The port keeps that shared list per instance. Pinned divergence: in Python the list
//! belongs to the process, so it also carries over between instances (the model's and the
//! ground truth's) and between entries; no ground truth posts without mentions and then
//! mentions, so only model results can meet the difference.

use super::backend::{Backend, CallError, Method, optional, required};
use super::long_context::LongContext;
use super::pyobject::{
    config_or, contains, dict_get, format, get_item, get_item_mut, lower, no_attribute, set_item,
    to_int,
};
use super::pyops::{self, truthy};
use super::value::PyValue;

const METHODS: &[Method] = &[
    Method {
        name: "authenticate_twitter",
        params: &[required("username"), required("password")],
    },
    Method {
        name: "posting_get_login_status",
        params: &[],
    },
    Method {
        name: "post_tweet",
        params: &[
            required("content"),
            optional("tags", "[]"),
            optional("mentions", SHARED_MENTIONS),
        ],
    },
    Method {
        name: "retweet",
        params: &[required("tweet_id")],
    },
    Method {
        name: "comment",
        params: &[required("tweet_id"), required("comment_content")],
    },
    Method {
        name: "mention",
        params: &[required("tweet_id"), required("mentioned_usernames")],
    },
    Method {
        name: "follow_user",
        params: &[required("username_to_follow")],
    },
    Method {
        name: "list_all_following",
        params: &[],
    },
    Method {
        name: "unfollow_user",
        params: &[required("username_to_unfollow")],
    },
    Method {
        name: "get_tweet",
        params: &[required("tweet_id")],
    },
    Method {
        name: "get_user_tweets",
        params: &[required("username")],
    },
    Method {
        name: "search_tweets",
        params: &[required("keyword")],
    },
    Method {
        name: "get_tweet_comments",
        params: &[required("tweet_id")],
    },
    Method {
        name: "get_user_stats",
        params: &[required("username")],
    },
];

/// The marker of `post_tweet`'s shared default `mentions` list.
const SHARED_MENTIONS: &str = "<shared mentions>";

/// The `TwitterAPI` class.
#[derive(Debug, Clone)]
pub struct TwitterApi {
    username: PyValue,
    password: PyValue,
    authenticated: PyValue,
    tweets: PyValue,
    comments: PyValue,
    retweets: PyValue,
    following_list: PyValue,
    tweet_counter: PyValue,
    /// The shared default `mentions` list's items.
    shared_mentions: Vec<PyValue>,
    /// Ids of the tweets whose `mentions` is the shared default list.
    sharing: Vec<PyValue>,
}

impl Default for TwitterApi {
    fn default() -> Self {
        let mut api = Self {
            username: PyValue::None,
            password: PyValue::None,
            authenticated: PyValue::None,
            tweets: PyValue::None,
            comments: PyValue::None,
            retweets: PyValue::None,
            following_list: PyValue::None,
            tweet_counter: PyValue::None,
            shared_mentions: Vec::new(),
            sharing: Vec::new(),
        };
        // The default scenario holds no tweets, so loading it cannot fail.
        let _ = api.load(&PyValue::Dict(Vec::new()));
        api
    }
}

fn error(text: String) -> PyValue {
    PyValue::dict([("error", PyValue::Str(text))])
}

fn unauthenticated(action: &str) -> PyValue {
    error(format!(
        "User not authenticated. Please authenticate before {action}."
    ))
}

fn not_found(tweet_id: &PyValue) -> PyValue {
    error(format!("Tweet with ID {} not found.", format(tweet_id)))
}

fn one(key: &str, value: PyValue) -> PyValue {
    PyValue::dict([(key, value)])
}

fn list_mut<'a>(value: &'a mut PyValue, method: &str) -> Result<&'a mut Vec<PyValue>, CallError> {
    match value {
        PyValue::List(items) => Ok(items),
        other => Err(no_attribute(other, method)),
    }
}

impl TwitterApi {
    fn load(&mut self, config: &PyValue) -> Result<(), CallError> {
        self.username = config_or(config, "username", PyValue::str("john"));
        self.password = config_or(config, "password", PyValue::str("john123"));
        self.authenticated = config_or(config, "authenticated", PyValue::Bool(false));
        let tweets = config_or(config, "tweets", PyValue::Dict(Vec::new()));
        let PyValue::Dict(pairs) = tweets else {
            return Err(no_attribute(&tweets, "items"));
        };
        let mut by_id = PyValue::Dict(Vec::new());
        for (key, tweet) in pairs {
            set_item(&mut by_id, PyValue::Int(to_int(&key)?), tweet)?;
        }
        self.tweets = by_id;
        self.comments = config_or(config, "comments", PyValue::Dict(Vec::new()));
        self.retweets = config_or(config, "retweets", PyValue::Dict(Vec::new()));
        self.following_list = config_or(
            config,
            "following_list",
            PyValue::List(vec![PyValue::str("alice"), PyValue::str("bob")]),
        );
        self.tweet_counter = config_or(config, "tweet_counter", PyValue::Int(0));
        self.shared_mentions = Vec::new();
        self.sharing = Vec::new();
        Ok(())
    }

    fn tweet_values(&self) -> Vec<PyValue> {
        match &self.tweets {
            PyValue::Dict(pairs) => pairs.iter().map(|(_, tweet)| tweet.clone()).collect(),
            _ => Vec::new(),
        }
    }

    fn tweets_by(&self, username: &PyValue) -> Result<Vec<PyValue>, CallError> {
        let mut found = Vec::new();
        for tweet in self.tweet_values() {
            if get_item(&tweet, &PyValue::str("username"))? == username {
                found.push(tweet);
            }
        }
        Ok(found)
    }

    fn post_tweet(
        &mut self,
        content: PyValue,
        tags: PyValue,
        mentions: PyValue,
    ) -> Result<PyValue, CallError> {
        if !truthy(&self.authenticated) {
            return Ok(unauthenticated("posting"));
        }
        let id = self.tweet_counter.clone();
        let shared = matches!(&mentions, PyValue::Opaque(marker) if marker == SHARED_MENTIONS);
        let mentions = if shared {
            PyValue::List(self.shared_mentions.clone())
        } else {
            mentions
        };
        let tweet = PyValue::dict([
            ("id", self.tweet_counter.clone()),
            ("username", self.username.clone()),
            ("content", content),
            ("tags", tags),
            ("mentions", mentions),
        ]);
        set_item(&mut self.tweets, self.tweet_counter.clone(), tweet.clone())?;
        self.sharing.retain(|other| *other != id);
        if shared {
            self.sharing.push(id);
        }
        self.tweet_counter = pyops::add(&self.tweet_counter, &PyValue::Int(1))?;
        Ok(tweet)
    }

    fn retweet(&mut self, tweet_id: PyValue) -> Result<PyValue, CallError> {
        if !truthy(&self.authenticated) {
            return Ok(unauthenticated("retweeting"));
        }
        if !contains(&self.tweets, &tweet_id)? {
            return Ok(not_found(&tweet_id));
        }
        if !contains(&self.retweets, &self.username)? {
            set_item(
                &mut self.retweets,
                self.username.clone(),
                PyValue::List(Vec::new()),
            )?;
        }
        let list = get_item_mut(&mut self.retweets, &self.username)?;
        if contains(list, &tweet_id)? {
            return Ok(one("retweet_status", PyValue::str("Already retweeted")));
        }
        list_mut(list, "append")?.push(tweet_id);
        Ok(one(
            "retweet_status",
            PyValue::str("Successfully retweeted"),
        ))
    }

    fn comment(&mut self, tweet_id: PyValue, content: PyValue) -> Result<PyValue, CallError> {
        if !truthy(&self.authenticated) {
            return Ok(unauthenticated("commenting"));
        }
        if !contains(&self.tweets, &tweet_id)? {
            return Ok(not_found(&tweet_id));
        }
        if !contains(&self.comments, &tweet_id)? {
            set_item(
                &mut self.comments,
                tweet_id.clone(),
                PyValue::List(Vec::new()),
            )?;
        }
        let entry = PyValue::dict([("username", self.username.clone()), ("content", content)]);
        list_mut(get_item_mut(&mut self.comments, &tweet_id)?, "append")?.push(entry);
        Ok(one(
            "comment_status",
            PyValue::str("Comment added successfully"),
        ))
    }

    fn mention(&mut self, tweet_id: PyValue, usernames: &PyValue) -> Result<PyValue, CallError> {
        if !contains(&self.tweets, &tweet_id)? {
            return Ok(not_found(&tweet_id));
        }
        if self.sharing.contains(&tweet_id) {
            self.shared_mentions.extend(pyops::iterate(usernames)?);
            for id in self.sharing.clone() {
                let tweet = get_item_mut(&mut self.tweets, &id)?;
                set_item(
                    tweet,
                    PyValue::str("mentions"),
                    PyValue::List(self.shared_mentions.clone()),
                )?;
            }
        } else {
            let tweet = get_item_mut(&mut self.tweets, &tweet_id)?;
            let mentions = get_item_mut(tweet, &PyValue::str("mentions"))?;
            let list = list_mut(mentions, "extend")?;
            list.extend(pyops::iterate(usernames)?);
        }
        Ok(one(
            "mention_status",
            PyValue::str("Users mentioned successfully"),
        ))
    }

    fn search_tweets(&self, keyword: &PyValue) -> Result<PyValue, CallError> {
        let mut found = Vec::new();
        for tweet in self.tweet_values() {
            let keyword = lower(keyword)?;
            if lower(get_item(&tweet, &PyValue::str("content"))?)?.contains(&keyword) {
                found.push(tweet);
                continue;
            }
            let mut tags = Vec::new();
            for tag in pyops::iterate(get_item(&tweet, &PyValue::str("tags"))?)? {
                tags.push(lower(&tag)?);
            }
            if tags.contains(&keyword) {
                found.push(tweet);
            }
        }
        Ok(PyValue::List(found))
    }

    fn get_user_stats(&self, username: &PyValue) -> Result<PyValue, CallError> {
        let tweet_count = self.tweets_by(username)?.len();
        let following_count = if *username == self.username {
            match &self.following_list {
                PyValue::List(items) => items.len(),
                other => {
                    return Err(CallError::raised(format!(
                        "object of type '{}' has no len()",
                        other.type_name()
                    )));
                }
            }
        } else {
            0
        };
        super::pyobject::hashable(username)?;
        let retweet_count = match dict_get(&self.retweets, username) {
            Some(PyValue::List(items)) => items.len(),
            Some(other) => pyops::iterate(other)?.len(),
            None => 0,
        };
        Ok(PyValue::dict([
            ("tweet_count", PyValue::Int(tweet_count as i64)),
            ("following_count", PyValue::Int(following_count as i64)),
            ("retweet_count", PyValue::Int(retweet_count as i64)),
        ]))
    }
}

impl Backend for TwitterApi {
    fn class_name(&self) -> &'static str {
        "TwitterAPI"
    }

    fn methods(&self) -> &'static [Method] {
        METHODS
    }

    fn load_scenario(
        &mut self,
        config: &PyValue,
        _long_context: &LongContext,
    ) -> Result<(), CallError> {
        self.load(config)
    }

    fn call(&mut self, method: &str, args: Vec<PyValue>) -> Result<PyValue, CallError> {
        let mut args = args.into_iter();
        let mut next = || args.next().unwrap_or(PyValue::None);
        match method {
            "authenticate_twitter" => {
                let (username, password) = (next(), next());
                let valid = username == self.username && password == self.password;
                if valid {
                    self.authenticated = PyValue::Bool(true);
                }
                Ok(one("authentication_status", PyValue::Bool(valid)))
            }
            "posting_get_login_status" => Ok(one(
                "login_status",
                PyValue::Bool(truthy(&self.authenticated)),
            )),
            "post_tweet" => {
                let (content, tags, mentions) = (next(), next(), next());
                self.post_tweet(content, tags, mentions)
            }
            "retweet" => self.retweet(next()),
            "comment" => {
                let (tweet_id, content) = (next(), next());
                self.comment(tweet_id, content)
            }
            "mention" => {
                let (tweet_id, usernames) = (next(), next());
                self.mention(tweet_id, &usernames)
            }
            "follow_user" => {
                let name = next();
                if !truthy(&self.authenticated) {
                    return Ok(unauthenticated("following"));
                }
                if contains(&self.following_list, &name)? {
                    return Ok(one("follow_status", PyValue::Bool(false)));
                }
                list_mut(&mut self.following_list, "append")?.push(name);
                Ok(one("follow_status", PyValue::Bool(true)))
            }
            "list_all_following" => {
                if !truthy(&self.authenticated) {
                    return Ok(unauthenticated("listing following"));
                }
                Ok(one("following_list", self.following_list.clone()))
            }
            "unfollow_user" => {
                let name = next();
                if !truthy(&self.authenticated) {
                    return Ok(unauthenticated("unfollowing"));
                }
                if !contains(&self.following_list, &name)? {
                    return Ok(one("unfollow_status", PyValue::Bool(false)));
                }
                let list = list_mut(&mut self.following_list, "remove")?;
                if let Some(index) = list.iter().position(|item| *item == name) {
                    list.remove(index);
                }
                Ok(one("unfollow_status", PyValue::Bool(true)))
            }
            "get_tweet" => {
                let tweet_id = next();
                if !contains(&self.tweets, &tweet_id)? {
                    return Ok(not_found(&tweet_id));
                }
                Ok(get_item(&self.tweets, &tweet_id)?.clone())
            }
            "get_user_tweets" => Ok(PyValue::List(self.tweets_by(&next())?)),
            "search_tweets" => self.search_tweets(&next()),
            "get_tweet_comments" => {
                let tweet_id = next();
                if !contains(&self.tweets, &tweet_id)? {
                    return Ok(not_found(&tweet_id));
                }
                Ok(dict_get(&self.comments, &tweet_id)
                    .cloned()
                    .unwrap_or(PyValue::List(Vec::new())))
            }
            "get_user_stats" => self.get_user_stats(&next()),
            other => Err(no_attribute(&PyValue::Opaque("TwitterAPI".into()), other)),
        }
    }

    fn state(&self) -> Vec<(&'static str, PyValue)> {
        vec![
            ("username", self.username.clone()),
            ("password", self.password.clone()),
            ("authenticated", self.authenticated.clone()),
            ("tweets", self.tweets.clone()),
            ("comments", self.comments.clone()),
            ("retweets", self.retweets.clone()),
            ("following_list", self.following_list.clone()),
            ("tweet_counter", self.tweet_counter.clone()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bfcl::multi_turn::backend::call_text;

    /// Results as bfcl-eval's `TwitterAPI` (default scenario) returns them.
    #[test]
    fn default_scenario_calls_match_python() {
        let mut api = TwitterApi::default();
        let none = PyValue::List(Vec::new());
        assert_eq!(
            call_text(
                &mut api,
                "post_tweet",
                vec![PyValue::str("x"), none.clone(), none.clone()]
            ),
            "{\"error\": \"User not authenticated. Please authenticate before posting.\"}"
        );
        call_text(
            &mut api,
            "authenticate_twitter",
            vec![PyValue::str("john"), PyValue::str("john123")],
        );
        assert_eq!(
            call_text(
                &mut api,
                "post_tweet",
                vec![
                    PyValue::str("Hello"),
                    PyValue::List(vec![PyValue::str("#A")]),
                    none
                ]
            ),
            "{\"id\": 0, \"username\": \"john\", \"content\": \"Hello\", \"tags\": [\"#A\"], \
             \"mentions\": []}"
        );
        assert_eq!(
            call_text(&mut api, "search_tweets", vec![PyValue::str("#a")]),
            "[{'id': 0, 'username': 'john', 'content': 'Hello', 'tags': ['#A'], 'mentions': []}]"
        );
        assert_eq!(
            call_text(
                &mut api,
                "comment",
                vec![PyValue::str("0"), PyValue::str("c")]
            ),
            "{\"error\": \"Tweet with ID 0 not found.\"}"
        );
        assert_eq!(
            call_text(&mut api, "retweet", vec![PyValue::Int(0)]),
            "{\"retweet_status\": \"Successfully retweeted\"}"
        );
        assert_eq!(
            call_text(&mut api, "get_user_stats", vec![PyValue::str("john")]),
            "{\"tweet_count\": 1, \"following_count\": 2, \"retweet_count\": 1}"
        );
        assert_eq!(
            call_text(&mut api, "get_tweet_comments", vec![PyValue::Int(0)]),
            "[]"
        );
        // Tweets posted without mentions share Python's default list.
        let shared = || PyValue::Opaque(SHARED_MENTIONS.into());
        for content in ["a", "b"] {
            call_text(
                &mut api,
                "post_tweet",
                vec![PyValue::str(content), PyValue::List(Vec::new()), shared()],
            );
        }
        call_text(
            &mut api,
            "mention",
            vec![PyValue::Int(1), PyValue::List(vec![PyValue::str("x")])],
        );
        assert_eq!(
            call_text(&mut api, "get_tweet", vec![PyValue::Int(2)]),
            "{\"id\": 2, \"username\": \"john\", \"content\": \"b\", \"tags\": [], \
             \"mentions\": [\"x\"]}"
        );
    }
}
